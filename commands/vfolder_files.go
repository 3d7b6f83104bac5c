package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// AuthorizeVFolderFiles checks whether the actor may read (Write and
// Remove false), write, or delete files of a folder, and for writes
// computes the quota an upload must respect. It appends nothing: file
// operations are not events; the file API calls it before each one.
type AuthorizeVFolderFiles struct {
	Actor    Principal
	FolderID uuid.UUID
	Write    bool
	Remove   bool
}

func (AuthorizeVFolderFiles) CommandName() string { return "vfolder.files.authorize" }

// VFolderFilesGrant says where the folder's files are and how much an
// upload may make it hold.
type VFolderFilesGrant struct {
	FolderID   uuid.UUID
	Host       string
	Permission domain.VFolderPermission
	// Quota is the most bytes the folder may hold after a write: the
	// smaller of the folder's quota and what its owner's quota scope
	// (max_quota_scope_size) leaves it; 0 means no limit. Set for writes.
	Quota int64
	// Scope names the owner's quota scope when it has a size limit (set
	// for writes): uploads into the scope's folders must then be written
	// one at a time, each authorized anew, so that together they cannot
	// pass the limit (a single folder's quota the storage holds itself).
	Scope string
}

type authorizeVFolderFilesHandler struct{ vfolderParts }

// newAuthorizeVFolderFilesHandler builds the handler over the vfolder parts.
func newAuthorizeVFolderFilesHandler(parts vfolderParts) authorizeVFolderFilesHandler {
	return authorizeVFolderFilesHandler{parts}
}

// Handle decides with the folder (domain.VFolder.CheckFileAccess: the
// viewer's permission, a ready folder, the upload-file or download-file
// host permission). For a write under a quota scope it measures the usage
// of every folder of the owner (the owner's index lists them) and names
// the scope (Scope), which the caller serialises its uploads on.
func (h authorizeVFolderFilesHandler) Handle(ctx context.Context, _ Metadata, cmd AuthorizeVFolderFiles) (VFolderFilesGrant, error) {
	const op = "vfolder.files"
	acc, err := h.vfAccess(ctx, op, cmd.Actor)
	if err != nil {
		return VFolderFilesGrant{}, err
	}
	l, err := h.vfolders.folders.load(ctx, domain.VFolderStream(cmd.FolderID))
	if err != nil {
		return VFolderFilesGrant{}, err
	}
	f := l.agg
	if err := f.CheckFileAccess(acc.Viewer, acc.Hosts, cmd.Write, cmd.Remove); err != nil {
		return VFolderFilesGrant{}, err
	}
	perm, _ := f.EffectivePermission(acc.Viewer)
	g := VFolderFilesGrant{FolderID: f.ID(), Host: f.Host(), Permission: perm}
	if cmd.Write {
		if g.Quota, g.Scope, err = h.uploadQuota(ctx, op, f); err != nil {
			return VFolderFilesGrant{}, err
		}
	}
	return g, nil
}

// uploadQuota is the folder's quota, lowered to what the owner's quota
// scope leaves: its size limit minus what the owner's other folders hold.
func (h authorizeVFolderFilesHandler) uploadQuota(ctx context.Context, op string, f *domain.VFolder) (int64, string, error) {
	quota := f.Quota()
	policy, err := h.vf.Tenancy.StoragePolicy(ctx, f.Owner())
	if err != nil || policy.MaxQuotaScopeSize <= 0 {
		return quota, "", err
	}
	scope := f.Owner().Stream().String()
	others, err := h.scopeUsage(ctx, op, f.Owner(), f.ID())
	if err != nil {
		return 0, "", err
	}
	room := policy.MaxQuotaScopeSize - others
	if room <= 0 {
		return 0, scope, &domain.Error{Op: op, Kind: domain.KindQuotaExceeded, Field: "max_quota_scope_size",
			Message: "the owner's other folders already hold the quota scope's limit"}
	}
	if quota == 0 || room < quota {
		quota = room
	}
	return quota, scope, nil
}

// scopeUsage sums the bytes of the owner's folders but one.
func (d vfolderParts) scopeUsage(ctx context.Context, op string, owner domain.VFolderOwner, except uuid.UUID) (int64, error) {
	idx, err := d.vfolders.indexes.load(ctx, owner.Stream())
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, id := range idx.agg.Folders() {
		if id == except {
			continue
		}
		l, err := d.vfolders.folders.load(ctx, domain.VFolderStream(id))
		if err != nil {
			return 0, err
		}
		if !l.agg.Exists() || l.agg.Status() == domain.VFolderCloning {
			continue // no data yet, or none any more
		}
		n, err := d.vf.Storage.UsedBytes(ctx, l.agg.Host(), id)
		if err != nil {
			return 0, storageError(op, err)
		}
		sum += n
	}
	return sum, nil
}
