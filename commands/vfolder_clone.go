package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// CloneVFolder creates a copy of a ready folder as a new folder (Spec:
// its name, and optionally host, owner, usage mode, permission, quota;
// Spec.ID may be nil, as for CreateVFolder). The copy starts in status
// cloning; the vfolder jobs process manager (commands/vfolderjobs) copies
// the files and sends FinishVFolderClone.
type CloneVFolder struct {
	Actor    Principal
	SourceID uuid.UUID
	Spec     domain.VFolderSpec
}

func (CloneVFolder) CommandName() string { return "vfolder.clone" }

type cloneVFolderHandler struct{ vfolderParts }

// newCloneVFolderHandler builds the handler over the vfolder parts.
func newCloneVFolderHandler(parts vfolderParts) cloneVFolderHandler {
	return cloneVFolderHandler{parts}
}

// Handle decides on the source (domain.VFolder.Clone), then writes the
// new folder like CreateVFolder (the claim of the name and vfolder.created
// in status cloning, in one append; the default quota when none is asked
// for) without making its directory: the copy makes it, and
// it appears only complete. A retry with the same Spec.ID completes an
// interrupted clone.
func (h cloneVFolderHandler) Handle(ctx context.Context, md Metadata, cmd CloneVFolder) (VFolderResult, error) {
	const op = "vfolder.clone"
	acc, err := h.vfAccess(ctx, op, cmd.Actor)
	if err != nil {
		return VFolderResult{}, err
	}
	src, err := h.vfolders.folders.load(ctx, domain.VFolderStream(cmd.SourceID))
	if err != nil {
		return VFolderResult{}, err
	}
	spec := cmd.Spec
	if spec.ID == uuid.Nil {
		spec.ID = h.newID()
	}
	if spec.Quota == 0 {
		spec.Quota = h.vfDefaultQuota
	}
	evs, err := src.agg.Clone(spec, acc.Viewer, acc.Hosts, h.now())
	if err != nil {
		return VFolderResult{}, err
	}
	created := evs[0].(domain.VFolderCreated)
	if !h.vf.Storage.HasHost(created.Host) {
		return VFolderResult{}, domain.Invalid(op, "host", "no storage host named %q", created.Host)
	}
	pos, err := h.createFolder(ctx, op, md, acc, created)
	return folderResult(created.FolderID, pos, err)
}
