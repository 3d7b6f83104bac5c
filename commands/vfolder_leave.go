package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// LeaveVFolder removes a member from a shared user folder: the actor
// itself (UserID empty), or, for the folder's managers, another member.
type LeaveVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
	// UserID is the member to remove; empty: the actor.
	UserID string
}

func (LeaveVFolder) CommandName() string { return "vfolder.leave" }

type leaveVFolderHandler struct{ vfolderParts }

// newLeaveVFolderHandler builds the handler over the vfolder parts.
func newLeaveVFolderHandler(parts vfolderParts) leaveVFolderHandler {
	return leaveVFolderHandler{parts}
}

func (h leaveVFolderHandler) Handle(ctx context.Context, md Metadata, cmd LeaveVFolder) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.leave", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.Leave(acc.Viewer, cmd.UserID, at)
	})
}
