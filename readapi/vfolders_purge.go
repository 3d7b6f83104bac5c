package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// purgeVFolder handles POST /v1/vfolders/{id}/purge: the record of a deleted folder is removed and its name freed.
func (a *api) purgeVFolder(c *fiber.Ctx) error {
	const op = "vfolder.purge"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := folderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.PurgeVFolder.Handle(c.UserContext(), who.metadata(c), commands.PurgeVFolder{Actor: who.actor(), FolderID: id})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
