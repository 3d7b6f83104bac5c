package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// restoreVFolder handles POST /v1/vfolders/{id}/restore: the folder comes back from the trash.
func (a *api) restoreVFolder(c *fiber.Ctx) error {
	const op = "vfolder.restore"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := folderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.RestoreVFolder.Handle(c.UserContext(), who.metadata(c), commands.RestoreVFolder{Actor: who.actor(), FolderID: id})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
