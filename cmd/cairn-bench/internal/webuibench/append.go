package webuibench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/progress"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
)

// appendBatch is how many sessions one AppendMany writes.
const appendBatch = 500

// sessionTemplate is a session.requested event that RequestSession
// appended for a session created through the API, and its metadata: the
// sessions appended for the same user are copies of it with fresh ids,
// name and time.
type sessionTemplate struct {
	event    domain.SessionRequested
	metadata eventstore.Metadata
}

// readTemplate reads the session.requested event of the session id.
func readTemplate(ctx context.Context, store eventstore.Store, id uuid.UUID) (sessionTemplate, error) {
	recs, err := store.ReadStream(ctx, domain.SessionStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		return sessionTemplate{}, err
	}
	for _, r := range recs {
		if r.Type != domain.TypeSessionRequested {
			continue
		}
		ev, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			return sessionTemplate{}, err
		}
		switch e := ev.(type) {
		case domain.SessionRequested:
			return sessionTemplate{event: e, metadata: r.Metadata}, nil
		case *domain.SessionRequested:
			return sessionTemplate{event: *e, metadata: r.Metadata}, nil
		}
	}
	return sessionTemplate{}, fmt.Errorf("session %s: no %s event", id, domain.TypeSessionRequested)
}

// clone is the template's event for a new session n.
func (t sessionTemplate) clone(n int, at time.Time) (eventstore.EventData, uuid.UUID, error) {
	e := t.event
	e.SessionID = uuid.New()
	e.Name = seedName(n)
	e.At = at
	e.Kernels = append([]domain.KernelSpec(nil), e.Kernels...)
	for i := range e.Kernels {
		e.Kernels[i].KernelID = uuid.New()
	}
	data, err := domain.MarshalEvent(e)
	if err != nil {
		return eventstore.EventData{}, uuid.Nil, err
	}
	md := t.metadata
	md.RequestID = fmt.Sprintf("cairn-bench-webui-%d", n)
	return eventstore.EventData{ID: eventstore.NewEventID(), Type: e.EventType(), Version: domain.SchemaVersion, Data: data, Metadata: md}, e.SessionID, nil
}

// seedName is the name of the n-th seeded object.
func seedName(n int) string { return fmt.Sprintf("bench-%06d", n) }

// appendSessions appends the sessions [from, to) to store (the server is
// stopped), each a new stream with a copy of the session.requested event
// RequestSession appended for the template session of its owner
// (templateIDs: user id → session id; owner(n) names the user), in
// batches of appendBatch streams.
func appendSessions(ctx context.Context, store eventstore.Store, templateIDs map[string]uuid.UUID, owner func(int) string, from, to int) (err error) {
	if to <= from {
		return nil
	}
	templates := map[string]sessionTemplate{}
	for user, id := range templateIDs {
		if templates[user], err = readTemplate(ctx, store, id); err != nil {
			return err
		}
	}
	bar := progress.New("append sessions", progress.Options{Unit: "sessions"})
	defer func() { bar.Finish(err) }()
	at := time.Now().UTC()
	for lo := from; lo < to; lo += appendBatch {
		hi := min(lo+appendBatch, to)
		parts := make([]eventstore.StreamAppend, 0, hi-lo)
		for n := lo; n < hi; n++ {
			t, ok := templates[owner(n)]
			if !ok {
				return fmt.Errorf("no session template for user %s", owner(n))
			}
			// Newer sessions later, as a queue fills.
			ev, id, err := t.clone(n, at.Add(time.Duration(n-from)*time.Millisecond))
			if err != nil {
				return err
			}
			parts = append(parts, eventstore.StreamAppend{Stream: domain.SessionStream(id).String(), Expected: eventstore.NoStream, Events: []eventstore.EventData{ev}})
		}
		if _, err := store.AppendMany(ctx, parts...); err != nil {
			return err
		}
		bar.Update(uint64(hi-from), uint64(to-from))
	}
	return nil
}

// folderTemplate is the vfolder.created event CreateVFolder appended for
// a folder created through the API, and its metadata.
type folderTemplate struct {
	event    domain.VFolderCreated
	metadata eventstore.Metadata
}

// readFolderTemplate reads the vfolder.created event of the folder id.
func readFolderTemplate(ctx context.Context, store eventstore.Store, id uuid.UUID) (folderTemplate, error) {
	recs, err := store.ReadStream(ctx, domain.VFolderStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		return folderTemplate{}, err
	}
	for _, r := range recs {
		ev, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			return folderTemplate{}, err
		}
		switch e := ev.(type) {
		case domain.VFolderCreated:
			return folderTemplate{event: e, metadata: r.Metadata}, nil
		case *domain.VFolderCreated:
			return folderTemplate{event: *e, metadata: r.Metadata}, nil
		}
	}
	return folderTemplate{}, fmt.Errorf("folder %s: no vfolder.created event", id)
}

// ownerIndex is an owner's folder index as the appends grow it.
type ownerIndex struct {
	stream   string
	revision int64
	index    *domain.VFolderIndex
}

// loadIndex reads an owner's index stream.
func loadIndex(ctx context.Context, store eventstore.Store, owner domain.VFolderOwner) (*ownerIndex, error) {
	stream := owner.Stream().String()
	recs, err := store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	if err != nil {
		return nil, err
	}
	decoded, err := commands.DecodeStream(recs)
	if err != nil {
		return nil, err
	}
	x, err := domain.RehydrateVFolderIndex(decoded)
	if err != nil {
		return nil, err
	}
	return &ownerIndex{stream: stream, revision: int64(len(recs)) - 1, index: x}, nil
}

// appendFolders appends the folders [from, to) to store (the server is
// stopped) as CreateVFolder writes a folder: its directory on the storage
// host first, then in one AppendMany vfolder.created on the folder's new
// stream (a copy of its owner's template folder's event, with a fresh id,
// name and time) and the name's claim on the owner's index stream
// (decided by the index, domain.VFolderIndex.Claim).
func appendFolders(ctx context.Context, store eventstore.Store, storage *localfs.Storage, templateIDs map[string]uuid.UUID, owner func(int) string, from, to int) (err error) {
	if to <= from {
		return nil
	}
	templates := map[string]folderTemplate{}
	indexes := map[string]*ownerIndex{}
	for user, id := range templateIDs {
		t, err := readFolderTemplate(ctx, store, id)
		if err != nil {
			return err
		}
		templates[user] = t
		if indexes[user], err = loadIndex(ctx, store, t.event.Owner); err != nil {
			return err
		}
	}
	bar := progress.New("append folders", progress.Options{Unit: "folders"})
	defer func() { bar.Finish(err) }()
	// Each batch holds at most one part per owner's index besides its
	// folders' streams.
	const batch = eventstore.MaxStreamsPerAppend - 16
	at := time.Now().UTC()
	for lo := from; lo < to; lo += batch {
		hi := min(lo+batch, to)
		parts := make([]eventstore.StreamAppend, 0, hi-lo+len(indexes))
		claims := map[string][]eventstore.EventData{}
		for n := lo; n < hi; n++ {
			user := owner(n)
			t, ok := templates[user]
			if !ok {
				return fmt.Errorf("no folder template for user %s", user)
			}
			e := t.event
			e.FolderID, e.Name, e.At = uuid.New(), seedName(n), at.Add(time.Duration(n-from)*time.Millisecond)
			// The names are fresh: each claim is decided on the index as
			// it was before the batch.
			evs, err := indexes[user].index.Claim(e.FolderID, e.Name, 0, e.At)
			if err != nil {
				return err
			}
			if err := storage.CreateFolder(ctx, vfstorage.Ref{Host: e.Host, ID: e.FolderID}); err != nil {
				return err
			}
			md := t.metadata
			md.RequestID = fmt.Sprintf("cairn-bench-webui-folder-%d", n)
			created, err := encodeEvents(md, e)
			if err != nil {
				return err
			}
			claim, err := encodeEvents(md, evs...)
			if err != nil {
				return err
			}
			claims[user] = append(claims[user], claim...)
			parts = append(parts, eventstore.StreamAppend{Stream: domain.VFolderStream(e.FolderID).String(), Expected: eventstore.NoStream, Events: created})
		}
		for user, evs := range claims {
			x := indexes[user]
			parts = append(parts, eventstore.StreamAppend{Stream: x.stream, Expected: eventstore.Exact(x.revision), Events: evs})
			x.revision += int64(len(evs))
		}
		if _, err := store.AppendMany(ctx, parts...); err != nil {
			return err
		}
		bar.Update(uint64(hi-from), uint64(to-from))
	}
	return nil
}

// encodeEvents stores events as the commands do, with metadata md.
func encodeEvents(md eventstore.Metadata, events ...domain.Event) ([]eventstore.EventData, error) {
	out := make([]eventstore.EventData, len(events))
	for i, e := range events {
		data, err := domain.MarshalEvent(e)
		if err != nil {
			return nil, err
		}
		out[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: e.EventType(), Version: domain.SchemaVersion, Data: data, Metadata: md}
	}
	return out, nil
}

// offline opens the store at storeDSN and the storage hosts of the server
// whose data directory is dataDir (the server is stopped), runs fn and
// closes them.
func offline(ctx context.Context, storeDSN, dataDir string, fn func(eventstore.Store, *localfs.Storage) error) (err error) {
	store, err := dsn.Open(ctx, storeDSN)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	hosts := devserver.Config{DataDir: dataDir}.WithDefaults().VFolderHosts
	storage, err := localfs.Open(localfs.Config{Hosts: hosts, CreateHostDirs: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, storage.Close()) }()
	return fn(store, storage)
}
