package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// rejectVFolderInvitation handles POST /v1/vfolder-invitations/{id}/reject:
// the invitee declines.
func (a *api) rejectVFolderInvitation(c *fiber.Ctx) error {
	const op = "vfolder.invitation.reject"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	inv, err := a.Invitation(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.RejectVFolderInvitation.Handle(c.UserContext(), metadata(c, who),
		commands.RejectVFolderInvitation{Actor: actor(who), FolderID: inv.FolderID, InvitationID: inv.ID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
