package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// waitTimeout bounds every wait (generous: -race on a shared machine).
const waitTimeout = 30 * time.Second

// checkExclusive: while a holds the lease, b cannot take it (tryB makes one
// attempt with b, awaited to its end, so that no deadline can pass before
// b has tried); once a releases it, b can. A held lease makes b's Acquire
// wait until its context ends.
func checkExclusive(t *testing.T, a, b Lease, tryB func(t *testing.T) bool) {
	t.Helper()
	ctx := context.Background()
	heldA, releaseA, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tryB(t) {
		t.Fatal("b took a held lease")
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, _, err := b.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("b's Acquire of a held lease: %v, want the context's deadline", err)
	}
	if heldA.Err() != nil {
		t.Fatal("a lost the lease while nobody took it")
	}
	releaseA()
	if heldA.Err() == nil {
		t.Fatal("a's context lives on after release")
	}
	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	_, releaseB, err := b.Acquire(wctx)
	if err != nil {
		t.Fatalf("b cannot take the released lease: %v", err)
	}
	releaseB()
}

func TestFileLeaseIsExclusive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cairn.db.scheduler.lock")
	b := NewFile(path, 10*time.Millisecond)
	checkExclusive(t, NewFile(path, 10*time.Millisecond), b, func(t *testing.T) bool {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() // drops the lock if it was taken
		ok, err := b.try(f)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
}

func TestRunLeadsUntilStopped(t *testing.T) {
	t.Parallel()
	l := NewFile(filepath.Join(t.TempDir(), "lock"), 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	err := Run(ctx, l, "test", slog.New(slog.DiscardHandler), time.Millisecond, func(held context.Context) error {
		runs++
		if runs < 3 {
			return nil // returned early: Run tries again
		}
		cancel()
		<-held.Done()
		return held.Err()
	})
	if err != nil || runs != 3 {
		t.Fatalf("Run = %v after %d runs, want nil after 3", err, runs)
	}

	boom := fmt.Errorf("boom")
	err = Run(context.Background(), l, "test", nil, time.Millisecond, func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the leader's failure", err)
	}
}

// TestRunTreatsAFencedWriteAsALoss: a leader whose work fails because an
// append was fenced lost the lease; Run follows and tries again instead of
// failing.
func TestRunTreatsAFencedWriteAsALoss(t *testing.T) {
	t.Parallel()
	l := NewFile(filepath.Join(t.TempDir(), "lock"), 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	err := Run(ctx, l, "test", slog.New(slog.DiscardHandler), time.Millisecond, func(held context.Context) error {
		runs++
		if runs == 1 {
			return fmt.Errorf("scheduler: %w", &eventstore.FencedError{Fence: eventstore.Fence{Lease: "test", Epoch: 1}, Current: 2})
		}
		cancel()
		return nil
	})
	if err != nil || runs != 2 {
		t.Fatalf("Run = %v after %d runs, want nil after 2", err, runs)
	}
}
