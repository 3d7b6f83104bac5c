package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// shareVFolder handles POST /v1/vfolders/{id}/share {"user_id" or
// "email", "permission"}: a per-user permission on a project folder.
func (a *api) shareVFolder(c *fiber.Ctx) error {
	const op = "vfolder.share"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	var req struct {
		UserID     string `json:"user_id"`
		Email      string `json:"email"`
		Permission string `json:"permission"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.ShareVFolder.Handle(c.UserContext(), metadata(c, who), commands.ShareVFolder{
		Actor: actor(who), FolderID: id, UserID: req.UserID, Email: req.Email, Permission: domain.VFolderPermission(req.Permission)})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
