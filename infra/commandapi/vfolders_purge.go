package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// purgeVFolder handles POST /v1/vfolders/{id}/purge: the record of a deleted folder is removed and its name freed.
func (a *api) purgeVFolder(c *fiber.Ctx) error {
	const op = "vfolder.purge"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.PurgeVFolder.Handle(c.UserContext(), metadata(c, who), commands.PurgeVFolder{Actor: actor(who), FolderID: id})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
