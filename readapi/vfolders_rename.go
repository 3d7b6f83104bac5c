package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// renameVFolder handles POST /v1/vfolders/{id}/rename {"name": ...}.
func (a *api) renameVFolder(c *fiber.Ctx) error {
	const op = "vfolder.rename"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := folderID(c, op)
	if err != nil {
		return err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.RenameVFolder.Handle(c.UserContext(), who.metadata(c),
		commands.RenameVFolder{Actor: who.actor(), FolderID: id, Name: req.Name})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
