package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// deleteVFolderForever handles POST /v1/vfolders/{id}/delete-forever: the data of a folder in the trash is removed in the background (delete-ongoing, then delete-complete or delete-error); 202.
func (a *api) deleteVFolderForever(c *fiber.Ctx) error {
	const op = "vfolder.delete_forever"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.DeleteVFolderForever.Handle(c.UserContext(), metadata(c, who), commands.DeleteVFolderForever{Actor: actor(who), FolderID: id})
	return folderWrittenAnswer(c, http.StatusAccepted, res, err)
}
