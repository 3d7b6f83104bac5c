package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

func TestReopenKeepsEventsAndPositions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nested", "dir", "cairn.db") // Open creates the directory
	ctx := context.Background()

	s, err := Open(ctx, path, Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	first := events("x", 3)
	mustAppend(t, s, "a", eventstore.NoStream, first...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStoreAt(t, path, Options{Synchronous: "normal"})
	got, err := s.ReadStream(ctx, "a", eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].ID != first[2].ID || got[2].Position != 3 {
		t.Fatalf("after reopen: %+v", got)
	}
	// Retrying across a restart is still idempotent.
	if res := mustAppend(t, s, "a", eventstore.NoStream, first...); res != (eventstore.AppendResult{Revision: 2, Position: 3}) {
		t.Fatalf("retry after reopen = %+v", res)
	}
	if res := mustAppend(t, s, "a", eventstore.Exact(2), event("x", 4)); res.Position != 4 || res.Revision != 3 {
		t.Fatalf("append after reopen = %+v, want revision 3 position 4", res)
	}
	var recorded int
	if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if recorded != len(all) {
		t.Fatalf("%d migrations recorded, want %d (each once)", recorded, len(all))
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cairn.db")
	ctx := context.Background()
	s, err := Open(ctx, path, Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := OpenRaw(path, Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, Options{Logger: quietLogger})
	if err == nil {
		t.Error("Open accepted a schema newer than the build")
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	} else if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open: %v, want ErrSchemaTooNew", err)
	}
}

func TestOpenRefusesBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "x.db"), Options{MaxBatch: -1, Synchronous: "OFF"}); err == nil {
		t.Error("Open accepted invalid options")
	}
	for _, p := range []string{"", ":memory:"} {
		if _, err := Open(ctx, p, Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestPathsWithURICharacters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "we?ird #100% name.db")
	s := openStoreAt(t, path, Options{})
	mustAppend(t, s, "a", eventstore.NoStream, event("x", 0))
	if got := s.Path(); got != path {
		t.Fatalf("Path() = %q, want %q", got, path)
	}
	if m, err := filepath.Glob(filepath.Join(filepath.Dir(path), "we*")); err != nil || len(m) == 0 || m[0] != path {
		t.Fatalf("database file not at %q: %v %v", path, m, err)
	}
}

func TestCallsAfterCloseReturnErrClosed(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustAppend(t, s, "a", eventstore.NoStream, event("x", 0))
	sub, err := s.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for range sub.Messages() { // drains, then ends
	}
	if !errors.Is(sub.Err(), eventstore.ErrClosed) {
		t.Errorf("subscription ended with %v, want ErrClosed", sub.Err())
	}
	if _, err := s.Append(ctx, "a", eventstore.Any, event("x", 1)); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("Append: %v", err)
	}
	if _, err := s.ReadAll(ctx, 0, 10); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("ReadAll: %v", err)
	}
	if _, err := s.ReadStream(ctx, "a", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("ReadStream: %v", err)
	}
	if _, err := s.Subscribe(ctx, 0); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("Subscribe: %v", err)
	}
}

// TestCloseUnderLoad: Close while 16 writers append. Every Append returns
// (no hang), with success or ErrClosed; every success is on disk after a
// reopen, and nothing else is.
func TestCloseUnderLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cairn.db")
	ctx := context.Background()
	s, err := Open(ctx, path, Options{Logger: quietLogger, MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		written  = map[uuid.UUID]bool{}
		wg       sync.WaitGroup
		started  sync.WaitGroup
		writers  = 16
		closeErr error
	)
	started.Add(writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			defer once.Do(started.Done)
			for i := 0; ; i++ {
				ev := event("x", i)
				_, err := s.Append(ctx, fmt.Sprintf("w-%d", w), eventstore.Any, ev)
				if i == 5 {
					once.Do(started.Done) // this writer is in full swing
				}
				if errors.Is(err, eventstore.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				mu.Lock()
				written[ev.ID] = true
				mu.Unlock()
			}
		}()
	}
	started.Wait()
	closeErr = s.Close()
	wg.Wait()
	if closeErr != nil {
		t.Fatal(closeErr)
	}

	s = openStoreAt(t, path, Options{})
	stored := readAllEvents(t, s)
	if len(stored) != len(written) {
		t.Errorf("%d events stored, %d appends succeeded", len(stored), len(written))
	}
	for _, ev := range stored {
		if !written[ev.ID] {
			t.Errorf("event %s stored but its append did not report success", ev.ID)
		}
	}
}
