package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// trashVFolder handles DELETE /v1/vfolders/{id}: the folder goes to the trash (delete-pending); 200, also when it is there already.
func (a *api) trashVFolder(c *fiber.Ctx) error {
	const op = "vfolder.delete"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.TrashVFolder.Handle(c.UserContext(), metadata(c, who), commands.TrashVFolder{Actor: actor(who), FolderID: id})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
