package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// CreateVFolder creates a virtual folder. Spec.ID may be left nil (the
// handler picks one); a client that retries a create after an unknown
// outcome sends the id of its first try, which completes that creation
// instead of making a second folder. Spec.Owner defaults to the actor.
type CreateVFolder struct {
	Actor Principal
	Spec  domain.VFolderSpec
}

func (CreateVFolder) CommandName() string { return "vfolder.create" }

type createVFolderHandler struct{ deps }

// Handle decides the creation (domain.CreateVFolder: authorization, host
// permission, valid spec), then writes in this order:
//
//  1. the owner's index claims the name for the folder id (expected
//     revision; refuses a name in use and a count at max_vfolder_count);
//  2. the storage host makes the folder's directory (idempotent);
//  3. the folder's stream gets vfolder.created (no stream).
//
// The directory exists before the event says the folder does
// (domain.VFolderCreated), so a ready folder can always be mounted. A
// crash after 1 leaves a claimed name whose folder does not exist; after 2
// also an empty directory. Sending the same command again (same id)
// completes it: the claim is idempotent for the same id and name, and so
// are the directory and a stream that holds the same folder already.
func (h createVFolderHandler) Handle(ctx context.Context, md Metadata, cmd CreateVFolder) (VFolderResult, error) {
	const op = "vfolder.create"
	acc, err := h.vfAccess(ctx, op, cmd.Actor)
	if err != nil {
		return VFolderResult{}, err
	}
	spec := cmd.Spec
	if spec.ID == uuid.Nil {
		spec.ID = h.newID()
	}
	at := h.now()
	// Decide first: a refused request writes nothing.
	evs, err := domain.CreateVFolder(spec, acc.Viewer, acc.Hosts, at)
	if err != nil {
		return VFolderResult{}, err
	}
	created := evs[0].(domain.VFolderCreated)
	if !h.vf.Storage.HasHost(created.Host) {
		return VFolderResult{}, domain.Invalid(op, "host", "no storage host named %q", created.Host)
	}
	pos, err := h.createFolder(ctx, op, md, acc, created)
	if err != nil {
		return VFolderResult{}, err
	}
	return VFolderResult{FolderID: created.FolderID, Position: pos}, nil
}

// createFolder claims the name, makes the directory (unless the folder is
// a clone, whose directory the copy makes) and creates the stream.
func (d deps) createFolder(ctx context.Context, op string, md Metadata, acc VFolderAccess, created domain.VFolderCreated) (uint64, error) {
	stream := domain.VFolderStream(created.FolderID)
	existing, err := d.vfolders.folders.load(ctx, stream)
	if err != nil {
		return 0, err
	}
	if existing.revision >= 0 {
		return sameFolder(op, existing, created)
	}
	if o := created.Owner; o.Kind == domain.VFolderOwnedByProject {
		if dn, _, ok := domain.SplitProjectKey(o.ID); !ok || dn != o.Domain {
			return 0, domain.Invalid(op, "project", "%q is not a project of domain %q", o.ID, o.Domain)
		}
	}
	policy, err := d.vf.Tenancy.StoragePolicy(ctx, created.Owner)
	if domain.KindOf(err) == domain.KindNotFound {
		return 0, domain.Invalid(op, "project", "no project %q", created.Owner.ID)
	}
	if err != nil {
		return 0, err
	}
	if _, _, err := d.vfolders.indexes.update(ctx, created.Owner.Stream(), md, func(x *domain.VFolderIndex) ([]domain.Event, error) {
		events, err := x.Claim(created.FolderID, created.Name, policy.MaxVFolderCount, created.At)
		if domain.KindOf(err) != domain.KindConflict {
			return events, err
		}
		// The name is held: by an orphan (a create that stopped after its
		// claim and was never retried), it may be taken over.
		if orphan, ok := d.orphanClaim(ctx, md, x, created); ok {
			return x.TakeOver(orphan, created.FolderID, created.Name, created.At)
		}
		return nil, err
	}); err != nil {
		return 0, err
	}
	if created.Status != domain.VFolderCloning {
		if err := d.vf.Storage.CreateFolder(ctx, created.Host, created.FolderID); err != nil {
			return 0, storageError(op, err)
		}
	}
	pos, err := d.vfolders.folders.create(ctx, stream, md, []domain.Event{created})
	if errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		// A concurrent try of the same request got there first.
		existing, lerr := d.vfolders.folders.load(ctx, stream)
		if lerr != nil {
			return 0, lerr
		}
		return sameFolder(op, existing, created)
	}
	return pos, err
}

// sameFolder accepts a stream that holds the folder a retried create was
// making, and refuses any other (an id reused for another folder).
func sameFolder(op string, l loaded[*domain.VFolder], want domain.VFolderCreated) (uint64, error) {
	f := l.agg
	if f.ID() == want.FolderID && f.Owner() == want.Owner && f.Host() == want.Host && f.CloneOf() == want.CloneOf {
		return l.position, nil
	}
	return 0, domain.Errorf(op, domain.KindConflict, "folder id %s is taken", want.FolderID)
}

// orphanClaim reports whether the name created asks for is held by an
// orphan claim, and if so closes the orphan's stream
// (VFolderCreationAbandoned) so that it can never be created late: a
// claim older than the grace period (a create in progress finishes well
// within it) whose folder stream does not exist. Closing an orphan twice
// is harmless (the second append finds the stream and gives up).
func (d deps) orphanClaim(ctx context.Context, md Metadata, x *domain.VFolderIndex, created domain.VFolderCreated) (uuid.UUID, bool) {
	holder, ok := x.Lookup(created.Name)
	if !ok || holder == created.FolderID || created.At.Sub(x.ClaimedAt(created.Name)) < d.grace {
		return uuid.Nil, false
	}
	stream := domain.VFolderStream(holder)
	l, err := d.vfolders.folders.load(ctx, stream)
	if err != nil || (l.revision >= 0 && l.agg.Exists()) {
		return uuid.Nil, false
	}
	if l.revision < 0 {
		if _, err := d.vfolders.folders.create(ctx, stream, md, []domain.Event{
			domain.VFolderCreationAbandoned{FolderID: holder, Name: created.Name, At: created.At}}); err != nil {
			return uuid.Nil, false // created meanwhile, or the store failed: the name stays held
		}
	}
	return holder, true
}
