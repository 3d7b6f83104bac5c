package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// RestoreVFolder takes a folder out of the trash (ready again). Restoring
// a ready folder appends nothing.
type RestoreVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
}

func (RestoreVFolder) CommandName() string { return "vfolder.restore" }

type restoreVFolderHandler struct{ vfolderParts }

// newRestoreVFolderHandler builds the handler over the vfolder parts.
func newRestoreVFolderHandler(parts vfolderParts) restoreVFolderHandler {
	return restoreVFolderHandler{parts}
}

func (h restoreVFolderHandler) Handle(ctx context.Context, md Metadata, cmd RestoreVFolder) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.restore", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.Restore(acc.Viewer, at)
	})
}
