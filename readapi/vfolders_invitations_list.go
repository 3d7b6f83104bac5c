package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/vfolders"
)

const opListInvitations = "vfolder.invitation.list"

// listInvitationsResponse is the answer of GET /v1/vfolder-invitations.
type listInvitationsResponse struct {
	Items []vfolders.Invitation `json:"items"`
}

// listVFolderInvitations handles GET /v1/vfolder-invitations
// ?direction=received|sent&state=: the invitations the caller received
// (default) or sent, newest first; state (pending, accepted, rejected,
// cancelled) filters them.
func (a *api) listVFolderInvitations(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	state := domain.VFolderInvitationState(strings.Clone(c.Query("state")))
	switch state {
	case "", domain.InvitationPending, domain.InvitationAccepted, domain.InvitationRejected, domain.InvitationCancelled:
	default:
		return domain.Invalid(opListInvitations, "state", "%q is not one of pending, accepted, rejected, cancelled", state)
	}
	list := a.VFolders.Folders.InvitationsTo
	switch c.Query("direction") {
	case "", "received":
	case "sent":
		list = a.VFolders.Folders.InvitationsFrom
	default:
		return domain.Invalid(opListInvitations, "direction", "must be received or sent")
	}
	if err := a.WaitForPosition(c, opListInvitations); err != nil {
		return err
	}
	items, err := list(c.UserContext(), who.ID.String(), state)
	if err != nil {
		return err
	}
	return c.JSON(listInvitationsResponse{Items: items})
}

// Invitation reads the {id} invitation of a route (waiting for
// wait_for_position first). Whether the caller may act on it is the
// command's decision; one it may not see is not found either way.
func (a *API) Invitation(c *fiber.Ctx, op string) (vfolders.Invitation, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return vfolders.Invitation{}, domain.Errorf(op, domain.KindNotFound, "invitation %q not found", c.Params("id"))
	}
	if err := a.WaitForPosition(c, op); err != nil {
		return vfolders.Invitation{}, err
	}
	inv, err := a.VFolders.Folders.GetInvitation(c.UserContext(), id)
	if domain.KindOf(err) == domain.KindNotFound {
		return vfolders.Invitation{}, domain.Errorf(op, domain.KindNotFound, "invitation %s not found", id)
	}
	return inv, err
}
