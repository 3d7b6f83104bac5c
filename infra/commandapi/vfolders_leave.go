package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// leaveVFolder handles POST /v1/vfolders/{id}/leave: the caller leaves a
// folder shared with it; with a body {"user_id": ...} the folder's owner
// (or an admin) removes that member. The body is optional.
func (a *api) leaveVFolder(c *fiber.Ctx) error {
	const op = "vfolder.leave"
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
	}
	if len(c.Body()) > 0 {
		if err := decodeBody(c, op, &req); err != nil {
			return err
		}
	}
	res, err := a.Commands.LeaveVFolder.Handle(c.UserContext(), metadata(c, who),
		commands.LeaveVFolder{Actor: actor(who), FolderID: id, UserID: req.UserID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
