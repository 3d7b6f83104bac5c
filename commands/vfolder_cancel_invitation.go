package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// CancelVFolderInvitation withdraws an invitation (its inviter, or the folder's managers). A pending invitation only: any other
// is KindConflict, and one the actor may not act on is KindNotFound.
type CancelVFolderInvitation struct {
	Actor        Principal
	FolderID     uuid.UUID
	InvitationID uuid.UUID
}

func (CancelVFolderInvitation) CommandName() string { return "vfolder.invitation.cancel" }

type cancelVFolderInvitationHandler struct{ vfolderParts }

// newCancelVFolderInvitationHandler builds the handler over the vfolder parts.
func newCancelVFolderInvitationHandler(parts vfolderParts) cancelVFolderInvitationHandler {
	return cancelVFolderInvitationHandler{parts}
}

func (h cancelVFolderInvitationHandler) Handle(ctx context.Context, md Metadata, cmd CancelVFolderInvitation) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.invitation.cancel", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.CancelInvitation(acc.Viewer, cmd.InvitationID, at)
	})
}
