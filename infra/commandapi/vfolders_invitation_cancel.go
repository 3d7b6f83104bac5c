package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// cancelVFolderInvitation handles POST /v1/vfolder-invitations/{id}/cancel:
// the inviter (or the folder's managers) withdraws it.
func (a *api) cancelVFolderInvitation(c *fiber.Ctx) error {
	const op = "vfolder.invitation.cancel"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	inv, err := a.Invitation(c, op)
	if err != nil {
		return err
	}
	res, err := a.Commands.CancelVFolderInvitation.Handle(c.UserContext(), metadata(c, who),
		commands.CancelVFolderInvitation{Actor: actor(who), FolderID: inv.FolderID, InvitationID: inv.ID})
	return folderWrittenAnswer(c, http.StatusOK, res, err)
}
