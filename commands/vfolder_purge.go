package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// PurgeVFolder removes the record of a folder whose files were deleted
// from the trash (delete-complete); its name is then free again.
type PurgeVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
}

func (PurgeVFolder) CommandName() string { return "vfolder.purge" }

type purgeVFolderHandler struct{ vfolderParts }

// newPurgeVFolderHandler builds the handler over the vfolder parts.
func newPurgeVFolderHandler(parts vfolderParts) purgeVFolderHandler {
	return purgeVFolderHandler{parts}
}

// Handle appends vfolder.purged to the folder, then releases its name in
// the owner's index. A crash in between leaves the name held by a purged
// folder: purging again completes the release (and answers not found, as
// for any purged folder).
func (h purgeVFolderHandler) Handle(ctx context.Context, md Metadata, cmd PurgeVFolder) (VFolderResult, error) {
	const op = "vfolder.purge"
	acc, err := h.vfAccess(ctx, op, cmd.Actor)
	if err != nil {
		return VFolderResult{}, err
	}
	at := h.now()
	stream := domain.VFolderStream(cmd.FolderID)
	l, err := h.vfolders.folders.load(ctx, stream)
	if err != nil {
		return VFolderResult{}, err
	}
	if l.revision >= 0 && !l.agg.Exists() {
		// Purged already: finish the release an earlier purge may not have
		// made, then answer like any other purged folder.
		if _, err := h.release(ctx, md, l.agg, at); err != nil {
			return VFolderResult{}, err
		}
		return VFolderResult{}, domain.NotFound(op, "virtual folder")
	}
	f, pos, err := h.vfolders.folders.update(ctx, stream, md, func(f *domain.VFolder) ([]domain.Event, error) {
		return f.Purge(acc.Viewer, at)
	})
	if err != nil {
		return VFolderResult{}, err
	}
	p, err := h.release(ctx, md, f, at)
	if err != nil {
		return VFolderResult{}, err
	}
	return VFolderResult{FolderID: cmd.FolderID, Position: max(pos, p)}, nil
}

// release frees the names a purged folder holds in its owner's index.
func (h purgeVFolderHandler) release(ctx context.Context, md Metadata, f *domain.VFolder, at time.Time) (uint64, error) {
	_, pos, err := h.vfolders.indexes.update(ctx, f.Owner().Stream(), md, func(x *domain.VFolderIndex) ([]domain.Event, error) {
		return x.Release(f.ID(), at), nil
	})
	return pos, err
}
