package sqlite

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// TestLockWritesHoldsTheWriter: while a transaction of the process holds
// the write gate, the store commits no append; once it is released the
// append goes through. Releasing twice is harmless, and a caller waiting
// for the gate gives up with its context.
func TestLockWritesHoldsTheWriter(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	release, err := s.LockWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "held", eventstore.Any, events("e", 1)...)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("an append committed while the gate was held (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}

	waiting, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.LockWrites(waiting); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockWrites while held: %v, want the context's deadline", err)
	}

	release()
	release() // a second call must not free the gate another holder has
	if err := <-done; err != nil {
		t.Fatalf("append after release: %v", err)
	}
	again, err := s.LockWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "held", eventstore.Any, events("e", 1)...)
		next <- err
	}()
	select {
	case err := <-next:
		t.Fatalf("the double release let an append in under a new holder (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	again()
	if err := <-next; err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointerBoundsTheWAL: the write connections do not checkpoint
// (wal_autocheckpoint is 0), so without the store's checkpointer the WAL
// file would hold every page ever written; with it, appends flat out
// leave it bounded, and the checkpoints that hold the gate (for the WAL
// to start over) run.
func TestCheckpointerBoundsTheWAL(t *testing.T) {
	s := openTestStore(t, Options{Synchronous: "NORMAL"})
	s.checkpoints.interval = time.Millisecond
	s.checkpoints.resetFrames = 64

	var auto int
	if err := s.writer.conn.conn.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Fatalf("the write connection checkpoints every %d pages itself", auto)
	}

	big := make([]byte, 2000)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	ctx := context.Background()
	const appends, perAppend = 200, 25 // about 10 MB of events
	for range appends {
		evs := events("big", perAppend)
		for j := range evs {
			evs[j].Data = []byte(`{"pad":"` + string(big) + `"}`)
		}
		if _, err := s.Append(ctx, "s", eventstore.Any, evs...); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 4<<20 {
		t.Fatalf("the WAL file is %d bytes after about 10 MB of appends: not checkpointed", info.Size())
	}
	if s.checkpoints.runs.Load() == 0 || s.checkpoints.resets.Load() == 0 {
		t.Fatalf("checkpoints run %d, holding the gate %d: want both", s.checkpoints.runs.Load(), s.checkpoints.resets.Load())
	}
}
