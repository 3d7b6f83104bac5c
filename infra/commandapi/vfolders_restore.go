package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// restoreVFolder handles POST /v1/vfolders/{id}/restore: the folder comes back from the trash.
func (a *api) restoreVFolder(c *fiber.Ctx) error {
	const op = "vfolder.restore"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.RestoreVFolder.Handle(c.UserContext(), metadata(c, who), commands.RestoreVFolder{Actor: actor(who), FolderID: id})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
