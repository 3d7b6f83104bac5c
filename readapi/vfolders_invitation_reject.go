package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// rejectVFolderInvitation handles POST /v1/vfolder-invitations/{id}/reject:
// the invitee declines.
func (a *api) rejectVFolderInvitation(c *fiber.Ctx) error {
	const op = "vfolder.invitation.reject"
	who, err := callerOf(c)
	if err != nil {
		return err
	}
	inv, err := a.invitation(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.RejectVFolderInvitation.Handle(c.UserContext(), who.metadata(c),
		commands.RejectVFolderInvitation{Actor: who.actor(), FolderID: inv.FolderID, InvitationID: inv.ID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
