package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// UnshareVFolder removes a per-user permission from a project folder (the
// member falls back to the folder's permission). Removing one that is not
// there appends nothing.
type UnshareVFolder struct {
	Actor    Principal
	FolderID uuid.UUID
	UserID   string
	Email    string
}

func (UnshareVFolder) CommandName() string { return "vfolder.unshare" }

type unshareVFolderHandler struct{ vfolderParts }

// newUnshareVFolderHandler builds the handler over the vfolder parts.
func newUnshareVFolderHandler(parts vfolderParts) unshareVFolderHandler {
	return unshareVFolderHandler{parts}
}

func (h unshareVFolderHandler) Handle(ctx context.Context, md Metadata, cmd UnshareVFolder) (VFolderResult, error) {
	const op = "vfolder.unshare"
	target, err := h.shareTarget(ctx, op, cmd.Actor, cmd.UserID, cmd.Email, false)
	if err != nil {
		return VFolderResult{}, err
	}
	return h.updateFolder(ctx, op, md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		user, err := target.in(op, f, acc.Viewer)
		if err != nil {
			return nil, err
		}
		return f.Unshare(acc.Viewer, acc.Hosts, user, at)
	})
}
