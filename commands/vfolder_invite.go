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

type inviteToVFolderHandler struct{ deps }

// Handle resolves the address to a user (tenancy) and lets the folder
// decide (domain.VFolder.Invite). A user of another domain is answered
// like an unknown address: a folder is shared inside its domain only.
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
	invitee, err := h.vf.Tenancy.UserByEmail(ctx, email)
	if domain.KindOf(err) == domain.KindNotFound {
		return InviteToVFolderResult{}, domain.Invalid(op, "email", "no user with the e-mail address %q", email)
	}
	if err != nil {
		return InviteToVFolderResult{}, err
	}
	id := h.newID()
	res, err := h.updateFolder(ctx, op, md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		if _, ok := f.EffectivePermission(acc.Viewer); ok && invitee.Domain != f.Owner().Domain {
			return nil, domain.Invalid(op, "email", "no user with the e-mail address %q", email)
		}
		return f.Invite(acc.Viewer, acc.Hosts, id, invitee.ID.String(), email, cmd.Permission, at)
	})
	if err != nil {
		return InviteToVFolderResult{}, err
	}
	return InviteToVFolderResult{InvitationID: id, Invitee: invitee.ID, Position: res.Position}, nil
}
