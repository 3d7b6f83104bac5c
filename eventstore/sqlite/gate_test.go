package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
)

// TestLockWritesHoldsTheWriter: while a transaction of the process holds
// the write gate, the store commits no append; once it is released the
// append goes through. Releasing twice is harmless, and a caller waiting
// for the gate gives up with its context. The test runs in a synctest
// bubble: synctest.Wait returns once the append's goroutine and the writer
// are blocked for good (file I/O in progress is waited for), so an append
// that got past the gate would have answered by then.
func TestLockWritesHoldsTheWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("an append committed while the gate was held (err %v)", err)
		default:
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
		synctest.Wait()
		select {
		case err := <-next:
			t.Fatalf("the double release let an append in under a new holder (err %v)", err)
		default:
		}
		again()
		if err := <-next; err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckpointerBoundsTheWAL: the write connections do not checkpoint
// (wal_autocheckpoint is 0), so without the store's checkpointer the WAL
// file would hold every page ever written; with it, the checkpoints that
// hold the gate run after the commits and the WAL starts over, so its file
// stays bounded. Each append alone crosses the reset threshold and the test
// waits for the checkpoint it wakes before appending again: how far the WAL
// grows while appends outrun the checkpointer depends on the machine's
// speed, which a test cannot assert.
func TestCheckpointerBoundsTheWAL(t *testing.T) {
	opts := Options{Synchronous: "NORMAL"}
	opts.checkpoint = checkpointPace{interval: time.Millisecond, resetFrames: 8}
	s := openTestStore(t, opts)

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
	const appends, perAppend = 80, 25 // about 50 kB (more than 8 pages) each, 4 MB in all
	for i := range appends {
		evs := events("big", perAppend)
		for j := range evs {
			evs[j].Data = []byte(`{"pad":"` + string(big) + `"}`)
		}
		resets := s.checkpoints.resets.Load()
		if _, err := s.Append(ctx, "s", eventstore.Any, evs...); err != nil {
			t.Fatal(err)
		}
		// The append's commit woke the checkpointer, and the WAL holds at
		// least this append's frames: a checkpoint holding the gate follows.
		// It does file I/O on a connection of its own: poll for it.
		await.Until(t, 30*time.Second, fmt.Sprintf("a checkpoint holding the gate after append %d", i), func() bool {
			return s.checkpoints.resets.Load() > resets
		})
	}
	info, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// A write starts the WAL over once it is all copied back: at most the
	// last two or three appends are in it at any time.
	if info.Size() > 1<<20 {
		t.Fatalf("the WAL file is %d bytes after about 4 MB of appends: it did not start over", info.Size())
	}
}
