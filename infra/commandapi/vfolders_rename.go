package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// renameVFolder handles POST /v1/vfolders/{id}/rename {"name": ...}.
func (a *api) renameVFolder(c *fiber.Ctx) error {
	const op = "vfolder.rename"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.RenameVFolder.Handle(c.UserContext(), metadata(c, who),
		commands.RenameVFolder{Actor: actor(who), FolderID: id, Name: req.Name})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
