package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// TrashVFolder moves a ready folder to the trash (delete-pending); its
// files stay until DeleteVFolderForever. Trashing a folder in the trash
// appends nothing.
type TrashVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
}

func (TrashVFolder) CommandName() string { return "vfolder.trash" }

type trashVFolderHandler struct{ vfolderParts }

// newTrashVFolderHandler builds the handler over the vfolder parts.
func newTrashVFolderHandler(parts vfolderParts) trashVFolderHandler {
	return trashVFolderHandler{parts}
}

func (h trashVFolderHandler) Handle(ctx context.Context, md Metadata, cmd TrashVFolder) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.delete", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.Trash(acc.Viewer, acc.Hosts, at)
	})
}
