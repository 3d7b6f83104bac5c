package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
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

type createVFolderHandler struct{ vfolderParts }

// newCreateVFolderHandler builds the handler over the vfolder parts.
func newCreateVFolderHandler(parts vfolderParts) createVFolderHandler {
	return createVFolderHandler{parts}
}

// Handle decides the creation (domain.CreateVFolder: authorization, host
// permission, valid spec) and writes it with createFolder. A folder asked
// for without a quota gets the server's default (Options.DefaultVFolderQuota).
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
	if spec.Quota == 0 {
		spec.Quota = h.vfDefaultQuota
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

// createFolder writes a decided creation (of a new folder or a clone):
//
//  1. the owner's index decides the claim of the name (refusing a name in
//     use and a count at max_vfolder_count) before anything is written;
//  2. the storage host makes the folder's directory (idempotent), unless
//     the folder is a clone, whose directory the copy makes;
//  3. one atomic append (AppendMany) writes vfolder.created on the new
//     stream (no stream), the claim on the index (at the revision decided
//     on) and the request's access record, which rides with the folder's
//     stream: the audit trail says the folder was created exactly when it
//     was.
//
// The directory exists before the event says the folder does
// (domain.VFolderCreated), so a ready folder can always be mounted. A
// crash before 3 leaves at most an empty directory that no folder owns,
// and no claim and no record of success; the orphan collector
// (commands/vfolderorphans) sets such directories aside once they are
// older than its grace period; so it does with the directory of a create
// refused after making it (a concurrent create took the name between the
// decision and the append). Sending the same command again (same id)
// completes it: the directory is idempotent, and a stream that holds the
// same folder already is success. A concurrent writer of the index makes
// the claim be decided again.
func (d vfolderParts) createFolder(ctx context.Context, op string, md Metadata, acc VFolderAccess, created domain.VFolderCreated) (uint64, error) {
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
	retry := d.vfolders.indexes.retry
	wait := retry.newBackOff(ctx)
	madeDir := created.Status == domain.VFolderCloning // a clone's copy makes it
	for attempt := 1; ; attempt++ {
		claim, err := d.claimName(ctx, created, policy.MaxVFolderCount)
		if err != nil {
			return 0, err
		}
		if !madeDir {
			if err := d.vf.Storage.CreateFolder(ctx, created.Host, created.FolderID); err != nil {
				return 0, storageError(op, err)
			}
			madeDir = true
		}
		parts := append([]streamWrite{{stream: stream, revision: -1, events: []domain.Event{created}}}, claim...)
		res, err := appendBatch(ctx, d.vfolders.folders.store, md, parts)
		if err == nil {
			return res[len(res)-1].Position, nil // the parts are contiguous, in order
		}
		switch j := conflicted(err, parts); {
		case j == 0:
			// A concurrent try of the same request got there first.
			existing, lerr := d.vfolders.folders.load(ctx, stream)
			if lerr != nil {
				return 0, lerr
			}
			return sameFolder(op, existing, created)
		case j < 0:
			return 0, err
		case attempt >= retry.attempts:
			return 0, &domain.Error{Op: op, Kind: domain.KindConflict, Err: err,
				Message: fmt.Sprintf("gave up after %d attempts against concurrent writers", attempt)}
		}
		// Another writer changed the index (or took an orphan's stream):
		// decide the claim again on its new state.
		if werr := waitNext(ctx, wait); werr != nil {
			return 0, storeError(op, werr)
		}
	}
}

// claimName decides the claim of created's name on its owner's index: the
// index's part of the creating append, with the revision it was decided
// on. A name the same folder holds already (a claim written by an earlier
// version, which claimed before creating) needs no part. A name held by an
// orphan claim is taken over, with a second part that closes the
// orphan's stream.
func (d vfolderParts) claimName(ctx context.Context, created domain.VFolderCreated, maxCount int) ([]streamWrite, error) {
	index := created.Owner.Stream()
	l, err := d.vfolders.indexes.load(ctx, index)
	if err != nil {
		return nil, err
	}
	x := l.agg
	events, err := x.Claim(created.FolderID, created.Name, maxCount, created.At)
	if domain.KindOf(err) == domain.KindConflict {
		// The name is held: by an orphan (a create of an earlier version
		// that stopped after its claim and was never retried), it may be
		// taken over.
		orphan, closing, ok := d.orphanClaim(ctx, x, created)
		if !ok {
			return nil, err
		}
		events, err = x.TakeOver(orphan, created.FolderID, created.Name, created.At)
		if err != nil {
			return nil, err
		}
		return append([]streamWrite{{stream: index, revision: l.revision, events: events}}, closing...), nil
	}
	if err != nil || len(events) == 0 {
		return nil, err
	}
	return []streamWrite{{stream: index, revision: l.revision, events: events}}, nil
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
// orphan claim: one older than the grace period (a create in progress
// finishes well within it) whose folder does not exist. Creations write
// their claim and their folder in one append, so orphans are what earlier
// versions left. When the orphan's stream does not exist, closing is the
// part that closes it (VFolderCreationAbandoned, expecting no stream), so
// that it can never be created late; it is written with the takeover.
func (d vfolderParts) orphanClaim(ctx context.Context, x *domain.VFolderIndex, created domain.VFolderCreated) (uuid.UUID, []streamWrite, bool) {
	holder, ok := x.Lookup(created.Name)
	if !ok || holder == created.FolderID || created.At.Sub(x.ClaimedAt(created.Name)) < d.grace {
		return uuid.Nil, nil, false
	}
	stream := domain.VFolderStream(holder)
	l, err := d.vfolders.folders.load(ctx, stream)
	if err != nil || (l.revision >= 0 && l.agg.Exists()) {
		return uuid.Nil, nil, false
	}
	if l.revision >= 0 {
		return holder, nil, true // closed already
	}
	return holder, []streamWrite{{stream: stream, revision: -1, events: []domain.Event{
		domain.VFolderCreationAbandoned{FolderID: holder, Name: created.Name, At: created.At}}}}, true
}
