package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// deleteVFolderForever handles POST /v1/vfolders/{id}/delete-forever: the data of a folder in the trash is removed in the background (delete-ongoing, then delete-complete or delete-error); 202.
func (a *api) deleteVFolderForever(c *fiber.Ctx) error {
	const op = "vfolder.delete_forever"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := folderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.DeleteVFolderForever.Handle(c.UserContext(), who.metadata(c), commands.DeleteVFolderForever{Actor: who.actor(), FolderID: id})
	return folderWrittenAnswer(c, http.StatusAccepted, res, err)
}
