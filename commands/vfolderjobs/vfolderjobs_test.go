package vfolderjobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderjobs"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/await"
)

var (
	ctx     = context.Background()
	discard = slog.New(slog.NewTextHandler(io.Discard, nil))
	t0      = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// storage records the jobs' storage calls; clones of a failing source fail.
type storage struct {
	mu      sync.Mutex
	deleted []uuid.UUID
	cloned  []uuid.UUID
	failSrc uuid.UUID
}

func (s *storage) DeleteFolder(_ context.Context, _ string, id uuid.UUID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted = append(s.deleted, id)
	return nil
}

func (s *storage) CloneFolder(_ context.Context, _ string, src uuid.UUID, _ string, dst uuid.UUID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src == s.failSrc {
		return domain.Errorf("test", domain.KindUnavailable, "source unreadable")
	}
	s.cloned = append(s.cloned, dst)
	return nil
}

// pending is a fixed resume list as of the store's head.
// pending is a fixed pending list as of a position: what a read model
// answers (the jobs unfinished as of the position it has applied).
type pending struct {
	ids []uuid.UUID
	pos uint64
}

func (p pending) PendingJobs(context.Context) ([]uuid.UUID, uint64, error) { return p.ids, p.pos, nil }

// head is the store's last position.
func head(t *testing.T, store eventstore.Store) uint64 {
	t.Helper()
	evs, err := store.ReadAll(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Position
}

func appendEvents(t *testing.T, store eventstore.Store, id uuid.UUID, evs ...domain.Event) {
	t.Helper()
	var data []eventstore.EventData
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, eventstore.EventData{ID: eventstore.NewEventID(), Type: ev.EventType(), Version: domain.SchemaVersion, Data: b})
	}
	if _, err := store.Append(ctx, domain.VFolderStream(id).String(), eventstore.Any, data...); err != nil {
		t.Fatal(err)
	}
}

func created(id uuid.UUID, status domain.VFolderStatus, cloneOf uuid.UUID) domain.VFolderCreated {
	return domain.VFolderCreated{FolderID: id, Name: "f-" + id.String()[34:], Host: "local",
		Owner: domain.VFolderOwner{Kind: domain.VFolderOwnedByUser, ID: "alice", Domain: "d"}, Creator: "alice",
		UsageMode: domain.VFolderGeneral, Permission: domain.VFolderReadWrite, CloneOf: cloneOf, Status: status, At: t0}
}

func status(t *testing.T, store eventstore.Store, id uuid.UUID) domain.VFolderStatus {
	t.Helper()
	recs, err := store.ReadStream(ctx, domain.VFolderStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatal(err)
	}
	evs, err := commands.DecodeStream(recs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := domain.RehydrateVFolder(evs)
	if err != nil {
		t.Fatal(err)
	}
	return f.Status()
}

// A deletion left delete-ongoing before the start is resumed; clones
// created while the manager runs are copied (or fail with their message).
func TestManagerResumesAndFollows(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "x.db"), sqlite.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h, err := commands.NewHandlers(store, time.Now, commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, bad, doomed, copy1, copy2 := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	appendEvents(t, store, src, created(src, domain.VFolderReady, uuid.Nil))
	appendEvents(t, store, bad, created(bad, domain.VFolderReady, uuid.Nil))
	appendEvents(t, store, doomed, created(doomed, domain.VFolderReady, uuid.Nil),
		domain.VFolderTrashed{By: "alice", At: t0}, domain.VFolderDeleteStarted{By: "alice", At: t0})

	st := &storage{failSrc: bad}
	m, err := vfolderjobs.New(vfolderjobs.Config{Logger: discard}, store, pending{ids: []uuid.UUID{doomed, src}, pos: head(t, store)}, st, vfolderjobs.FromHandlers(h))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	appendEvents(t, store, copy1, created(copy1, domain.VFolderCloning, src))
	appendEvents(t, store, copy2, created(copy2, domain.VFolderCloning, bad))

	var s1, s2, s3 domain.VFolderStatus
	defer func() {
		if t.Failed() {
			t.Logf("statuses %s, %s, %s", s1, s2, s3)
		}
	}()
	await.Until(t, 30*time.Second, "the folders deleted, ready and in error", func() bool {
		s1, s2, s3 = status(t, store, doomed), status(t, store, copy1), status(t, store, copy2)
		return s1 == domain.VFolderDeleteComplete && s2 == domain.VFolderReady && s3 == domain.VFolderError
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.deleted) != 1 || st.deleted[0] != doomed || len(st.cloned) != 1 || st.cloned[0] != copy1 {
		t.Fatalf("deleted %v, cloned %v", st.deleted, st.cloned)
	}
	if status(t, store, src) != domain.VFolderReady {
		t.Fatal("a ready folder in the resume list was touched")
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	t.Parallel()
	if _, err := vfolderjobs.New(vfolderjobs.Config{Workers: -1}, nil, nil, nil, vfolderjobs.Finisher{}); err == nil {
		t.Fatal("built a manager without its parts")
	}
}
