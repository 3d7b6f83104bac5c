package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// acceptVFolderInvitation handles POST /v1/vfolder-invitations/{id}/accept:
// the invitee accepts: it becomes a member of the folder with the invitation's permission.
func (a *api) acceptVFolderInvitation(c *fiber.Ctx) error {
	const op = "vfolder.invitation.accept"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	inv, err := a.Invitation(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.AcceptVFolderInvitation.Handle(c.UserContext(), metadata(c, who),
		commands.AcceptVFolderInvitation{Actor: actor(who), FolderID: inv.FolderID, InvitationID: inv.ID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
