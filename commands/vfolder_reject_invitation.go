package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// RejectVFolderInvitation declines an invitation (the invitee). A pending invitation only: any other
// is KindConflict, and one the actor may not act on is KindNotFound.
type RejectVFolderInvitation struct {
	Actor        Principal
	FolderID     uuid.UUID
	InvitationID uuid.UUID
}

func (RejectVFolderInvitation) CommandName() string { return "vfolder.invitation.reject" }

type rejectVFolderInvitationHandler struct{ vfolderParts }

// newRejectVFolderInvitationHandler builds the handler over the vfolder parts.
func newRejectVFolderInvitationHandler(parts vfolderParts) rejectVFolderInvitationHandler {
	return rejectVFolderInvitationHandler{parts}
}

func (h rejectVFolderInvitationHandler) Handle(ctx context.Context, md Metadata, cmd RejectVFolderInvitation) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.invitation.reject", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.RejectInvitation(acc.Viewer, cmd.InvitationID, at)
	})
}
