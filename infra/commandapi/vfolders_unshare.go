package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// unshareVFolder handles POST /v1/vfolders/{id}/unshare {"user_id" or
// "email"}: the user falls back to the project folder's permission.
func (a *api) unshareVFolder(c *fiber.Ctx) error {
	const op = "vfolder.unshare"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	var req struct {
		UserID string `json:"user_id"`
		Email  string `json:"email"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.UnshareVFolder.Handle(c.UserContext(), metadata(c, who),
		commands.UnshareVFolder{Actor: actor(who), FolderID: id, UserID: req.UserID, Email: req.Email})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
