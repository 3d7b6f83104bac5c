package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// invitationCreated is the answer of POST /v1/vfolders/{id}/invitations.
type invitationCreated struct {
	ID       uuid.UUID `json:"id"`
	FolderID uuid.UUID `json:"folder_id"`
	Invitee  uuid.UUID `json:"invitee"`
	Position uint64    `json:"position"`
}

// inviteToVFolder handles POST /v1/vfolders/{id}/invitations
// {"email": ..., "permission": "ro"|"rw"|"wd"}: 201.
func (a *api) inviteToVFolder(c *fiber.Ctx) error {
	const op = "vfolder.invite"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	var req struct {
		Email      string `json:"email"`
		Permission string `json:"permission"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.InviteToVFolder.Handle(c.UserContext(), metadata(c, who), commands.InviteToVFolder{
		Actor: actor(who), FolderID: id, Email: req.Email, Permission: domain.VFolderPermission(req.Permission)})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(invitationCreated{ID: res.InvitationID, FolderID: id, Invitee: res.Invitee, Position: res.Position})
}
