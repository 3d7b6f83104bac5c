package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// TestLargeReadsWhileWriting: reads large enough to be split in two
// halves, made while 8 writers commit, return dense runs of positions
// that never skip one, and together every event once.
func TestLargeReadsWhileWriting(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{TailEvents: -1}) // every read from the database
	ctx := context.Background()
	const writers, appends, perAppend = 8, 60, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range appends {
				mustAppend(t, s, fmt.Sprintf("w%d-%d", w, a), eventstore.NoStream, events("big", perAppend)...)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var after uint64
	seen := 0
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := s.ReadAll(ctx, after, 3000)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Position != after+1 {
				t.Fatalf("position %d after %d: a read skipped an event", ev.Position, after)
			}
			after = ev.Position
		}
		seen += len(evs)
		if finished && len(evs) < 3000 {
			break
		}
	}
	if want := writers * appends * perAppend; seen != want {
		t.Fatalf("read %d events, want %d", seen, want)
	}
}

// TestSplitReadNeverSkips: events committed between the two halves' reads
// are seen by the second only; the read stops at the end of the first
// rather than return them after a hole.
func TestSplitReadNeverSkips(t *testing.T) {
	s := openTestStore(t, Options{TailEvents: -1})
	ctx := context.Background()
	mustAppend(t, s, "before", eventstore.NoStream, events("e", 1000)...) // positions 1-1000
	afterFirstHalf = func() {
		// Positions 1001-3000: both halves' spans (1-1024, 1025-2048 for
		// a read of 2048) now hold events, but the first read saw 1-1000.
		mustAppend(t, s, "between", eventstore.NoStream, events("e", 2000)...)
	}
	defer func() { afterFirstHalf = nil }()
	got, err := s.ReadAll(ctx, 0, splitRead)
	afterFirstHalf = nil
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1000 || got[len(got)-1].Position != 1000 {
		t.Fatalf("read %d events up to %d; want the first half's 1000", len(got), got[len(got)-1].Position)
	}
	got, err = s.ReadAll(ctx, 1000, splitRead)
	if err != nil || len(got) != 2000 || got[0].Position != 1001 || got[len(got)-1].Position != 3000 {
		t.Fatalf("next read: %d events, %v", len(got), err)
	}
}
