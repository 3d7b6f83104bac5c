package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// unshareVFolder handles POST /v1/vfolders/{id}/unshare {"user_id" or
// "email"}: the user falls back to the project folder's permission.
func (a *api) unshareVFolder(c *fiber.Ctx) error {
	const op = "vfolder.unshare"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := folderID(c, op)
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
	res, err := a.Commands.UnshareVFolder.Handle(c.UserContext(), who.metadata(c),
		commands.UnshareVFolder{Actor: who.actor(), FolderID: id, UserID: req.UserID, Email: req.Email})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
