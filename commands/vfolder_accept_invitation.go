package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// AcceptVFolderInvitation makes the invitee a member of the folder with the invitation's permission. A pending invitation only: any other
// is KindConflict, and one the actor may not act on is KindNotFound.
type AcceptVFolderInvitation struct {
	Actor        Principal
	FolderID     uuid.UUID
	InvitationID uuid.UUID
}

func (AcceptVFolderInvitation) CommandName() string { return "vfolder.invitation.accept" }

type acceptVFolderInvitationHandler struct{ vfolderParts }

// newAcceptVFolderInvitationHandler builds the handler over the vfolder parts.
func newAcceptVFolderInvitationHandler(parts vfolderParts) acceptVFolderInvitationHandler {
	return acceptVFolderInvitationHandler{parts}
}

func (h acceptVFolderInvitationHandler) Handle(ctx context.Context, md Metadata, cmd AcceptVFolderInvitation) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.invitation.accept", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.AcceptInvitation(acc.Viewer, cmd.InvitationID, at)
	})
}
