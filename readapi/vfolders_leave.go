package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// leaveVFolder handles POST /v1/vfolders/{id}/leave: the caller leaves a
// folder shared with it; with a body {"user_id": ...} the folder's owner
// (or an admin) removes that member. The body is optional.
func (a *api) leaveVFolder(c *fiber.Ctx) error {
	const op = "vfolder.leave"
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
	}
	if len(c.Body()) > 0 {
		if err := decodeBody(c, op, &req); err != nil {
			return err
		}
	}
	res, err := a.Commands.LeaveVFolder.Handle(c.UserContext(), who.metadata(c),
		commands.LeaveVFolder{Actor: who.actor(), FolderID: id, UserID: req.UserID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
