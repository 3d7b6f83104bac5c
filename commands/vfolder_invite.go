package commands

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// InviteToVFolder offers a user folder to another user of its domain,
// named by e-mail address, with a permission. The invitee accepts or
// rejects it; the inviter (or the folder's managers) may cancel it.
type InviteToVFolder struct {
	Actor      Principal
	FolderID   uuid.UUID
	Email      string
	Permission domain.VFolderPermission
}

func (InviteToVFolder) CommandName() string { return "vfolder.invite" }

// InviteToVFolderResult names the invitation.
type InviteToVFolderResult struct {
	InvitationID uuid.UUID
	Invitee      uuid.UUID
	Position     uint64
}

type inviteToVFolderHandler struct{ vfolderParts }

// newInviteToVFolderHandler builds the handler over the vfolder parts.
func newInviteToVFolderHandler(parts vfolderParts) inviteToVFolderHandler {
	return inviteToVFolderHandler{parts}
}

// Handle resolves the address to a user (tenancy) and lets the folder
// decide (domain.VFolder.Invite). An address of no user of the folder's
// domain is refused (a folder is shared inside its domain only), and only
// to whoever may invite to the folder (addressee.in): anyone else learns
// nothing of the address.
func (h inviteToVFolderHandler) Handle(ctx context.Context, md Metadata, cmd InviteToVFolder) (InviteToVFolderResult, error) {
	const op = "vfolder.invite"
	email := strings.TrimSpace(cmd.Email)
	if email == "" {
		return InviteToVFolderResult{}, domain.Invalid(op, "email", "must name a user")
	}
	if h.vf.Tenancy == nil {
		_, err := h.vfAccess(ctx, op, cmd.Actor)
		return InviteToVFolderResult{}, err
	}
	to, err := h.lookUpAddress(ctx, email)
	if err != nil {
		return InviteToVFolderResult{}, err
	}
	id := h.newID()
	var invitee VFolderUser
	res, err := h.updateFolder(ctx, op, md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		u, err := to.in(op, f, acc.Viewer)
		if err != nil {
			return nil, err
		}
		invitee = u
		return f.Invite(acc.Viewer, acc.Hosts, id, u.ID.String(), email, cmd.Permission, at)
	})
	if err != nil {
		return InviteToVFolderResult{}, err
	}
	return InviteToVFolderResult{InvitationID: id, Invitee: invitee.ID, Position: res.Position}, nil
}
