package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// RenameVFolder gives a ready folder a new name, unique among its owner's
// folders. Renaming to the current name appends nothing.
type RenameVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
	Name     string
}

func (RenameVFolder) CommandName() string { return "vfolder.rename" }

type renameVFolderHandler struct{ vfolderParts }

// newRenameVFolderHandler builds the handler over the vfolder parts.
func newRenameVFolderHandler(parts vfolderParts) renameVFolderHandler {
	return renameVFolderHandler{parts}
}

// Handle decides on the folder (domain.VFolder.Rename), then moves the
// name in the owner's index (claims the new one and releases the old one
// in one append), then appends vfolder.renamed. A crash between the two
// appends leaves the index ahead of the folder; the same rename sent again
// completes it (the index already holds the new name for this folder).
func (h renameVFolderHandler) Handle(ctx context.Context, md Metadata, cmd RenameVFolder) (VFolderResult, error) {
	const op = "vfolder.rename"
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
	evs, err := l.agg.Rename(acc.Viewer, acc.Hosts, cmd.Name, at)
	if err != nil || len(evs) == 0 {
		return folderResult(cmd.FolderID, l.position, err)
	}
	f := l.agg
	if _, _, err := h.vfolders.indexes.update(ctx, f.Owner().Stream(), md, func(x *domain.VFolderIndex) ([]domain.Event, error) {
		return x.Rename(f.ID(), f.Name(), cmd.Name, at)
	}); err != nil {
		return VFolderResult{}, err
	}
	_, pos, err := h.vfolders.folders.update(ctx, stream, md, func(f *domain.VFolder) ([]domain.Event, error) {
		return f.Rename(acc.Viewer, acc.Hosts, cmd.Name, at)
	})
	return folderResult(cmd.FolderID, pos, err)
}
