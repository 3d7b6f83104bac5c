package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// TestGroupCommitConcurrentWriters: 16 writers append to their own streams
// (exact revisions) and to one shared stream (any). Every append succeeds,
// positions are dense and in commit order, revisions are dense per stream,
// and appends were grouped into fewer transactions.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	const writers, perWriter = 16, 150
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := fmt.Sprintf("writer-%d", w)
			rev := int64(-1)
			for i := range perWriter {
				if i%3 == 2 {
					if _, err := s.Append(ctx, "shared", eventstore.Any, event("shared", i)); err != nil {
						errs <- err
						return
					}
					continue
				}
				n := 1 + i%2 // single and two-event appends
				res, err := s.Append(ctx, own, eventstore.Exact(rev), events("own", n)...)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", own, err)
					return
				}
				if res.Revision != rev+int64(n) {
					errs <- fmt.Errorf("%s: revision %d, want %d", own, res.Revision, rev+int64(n))
					return
				}
				rev = res.Revision
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	all := readAllEvents(t, s)
	next := map[string]int64{}
	for i, ev := range all {
		if ev.Position != uint64(i+1) {
			t.Fatalf("event %d has position %d: positions are not dense", i, ev.Position)
		}
		if ev.Revision != next[ev.Stream] {
			t.Fatalf("%s: revision %d, want %d", ev.Stream, ev.Revision, next[ev.Stream])
		}
		next[ev.Stream]++
	}
	if got, want := next["shared"], int64(writers*(perWriter/3)); got != want {
		t.Errorf("shared stream has %d events, want %d", got, want)
	}
	appends, batches := s.writer.appendsRun.Load(), s.writer.batches.Load()
	t.Logf("%d appends in %d transactions", appends, batches)
	if batches >= appends {
		t.Errorf("no grouping: %d appends in %d transactions", appends, batches)
	}
}

// TestCancellationNeverLies: appends with contexts that end at random
// moments. An append that reported success is stored; one that reported
// its context's error is not.
func TestCancellationNeverLies(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	const writers, perWriter = 16, 60

	var mu sync.Mutex
	ok := map[uuid.UUID]bool{}
	cancelled := map[uuid.UUID]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				ev := event("x", i)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(1500))*time.Microsecond)
				_, err := s.Append(ctx, fmt.Sprintf("w-%d-%d", w, i), eventstore.NoStream, ev)
				cancel()
				mu.Lock()
				switch {
				case err == nil:
					ok[ev.ID] = true
				case errors.Is(err, context.DeadlineExceeded):
					cancelled[ev.ID] = true
				default:
					t.Errorf("append: %v", err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	stored := map[uuid.UUID]bool{}
	for _, ev := range readAllEvents(t, s) {
		stored[ev.ID] = true
		if cancelled[ev.ID] {
			t.Errorf("event %s reported cancelled but stored", ev.ID)
		}
	}
	for id := range ok {
		if !stored[id] {
			t.Errorf("event %s reported written but not stored", id)
		}
	}
	t.Logf("%d written, %d cancelled", len(ok), len(cancelled))
}
