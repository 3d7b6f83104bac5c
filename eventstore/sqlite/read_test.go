package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func revisions(evs []eventstore.RecordedEvent) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Revision
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadStreamSlices(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	mustAppend(t, s, "s", eventstore.NoStream, events("x", 5)...)
	mustAppend(t, s, "other", eventstore.NoStream, events("x", 2)...)

	fwd, bwd := eventstore.Forward, eventstore.Backward
	tests := []struct {
		name string
		opts eventstore.ReadStreamOptions
		want []int64
	}{
		{"all", eventstore.ReadStreamOptions{}, []int64{0, 1, 2, 3, 4}},
		{"forward from 2", eventstore.ReadStreamOptions{Direction: fwd, From: 2}, []int64{2, 3, 4}},
		{"forward from 1 limit 2", eventstore.ReadStreamOptions{Direction: fwd, From: 1, Limit: 2}, []int64{1, 2}},
		{"forward past the end", eventstore.ReadStreamOptions{Direction: fwd, From: 9}, []int64{}},
		{"backward from end", eventstore.ReadStreamOptions{Direction: bwd, From: eventstore.FromEnd}, []int64{4, 3, 2, 1, 0}},
		{"backward from end limit 1", eventstore.ReadStreamOptions{Direction: bwd, From: eventstore.FromEnd, Limit: 1}, []int64{4}},
		{"backward from 2", eventstore.ReadStreamOptions{Direction: bwd, From: 2}, []int64{2, 1, 0}},
		{"backward from beyond the end", eventstore.ReadStreamOptions{Direction: bwd, From: 99, Limit: 2}, []int64{4, 3}},
	}
	for _, tt := range tests {
		got, err := s.ReadStream(ctx, "s", tt.opts)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !equalInts(revisions(got), tt.want) {
			t.Errorf("%s: revisions %v, want %v", tt.name, revisions(got), tt.want)
		}
		for _, ev := range got {
			if ev.Stream != "s" {
				t.Errorf("%s: event of stream %q", tt.name, ev.Stream)
			}
		}
	}

	for _, opts := range []eventstore.ReadStreamOptions{{}, {Direction: bwd, From: eventstore.FromEnd}, {From: 3}} {
		_, err := s.ReadStream(ctx, "missing", opts)
		if nf := asError[*eventstore.StreamNotFoundError](t, err); nf.Stream != "missing" {
			t.Errorf("not found names %q", nf.Stream)
		}
	}
}

func TestReadAllPages(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	for i := range 10 {
		mustAppend(t, s, "s", eventstore.Exact(int64(i*3)-1), events("x", 3)...)
	}
	var after uint64
	var pages int
	for {
		page, err := s.ReadAll(ctx, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		pages++
		for _, ev := range page {
			if ev.Position != after+1 {
				t.Fatalf("position %d after %d", ev.Position, after)
			}
			after = ev.Position
		}
	}
	if after != 30 || pages != 5 {
		t.Fatalf("read up to %d in %d pages, want 30 in 5", after, pages)
	}
	if page, err := s.ReadAll(ctx, 0, 0); err != nil || len(page) != 30 {
		t.Fatalf("ReadAll with no limit: %d events, %v", len(page), err)
	}
	if page, err := s.ReadAll(ctx, 1<<63, 10); err != nil || len(page) != 0 {
		t.Fatalf("ReadAll after a huge position: %d events, %v", len(page), err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.ReadAll(cctx, 0, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAll with a cancelled context: %v", err)
	}
}

func TestSubscribeCatchesUpThenFollows(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mustAppend(t, s, "s", eventstore.NoStream, events("x", 3)...)

	sub, err := s.Subscribe(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	next := func() eventstore.Message {
		t.Helper()
		select {
		case msg, ok := <-sub.Messages():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			return msg
		case <-ctx.Done():
			t.Fatal("timed out waiting for a message")
		}
		return eventstore.Message{}
	}
	for _, want := range []uint64{2, 3} {
		if msg := next(); msg.CaughtUp || msg.Event.Position != want {
			t.Fatalf("message %+v, want position %d", msg, want)
		}
	}
	if msg := next(); !msg.CaughtUp {
		t.Fatalf("message %+v, want caught up", msg)
	}
	mustAppend(t, s, "t", eventstore.NoStream, events("y", 2)...)
	for _, want := range []uint64{4, 5} {
		if msg := next(); msg.CaughtUp || msg.Event.Position != want || msg.Event.Stream != "t" {
			t.Fatalf("live message %+v, want position %d", msg, want)
		}
	}
	sub.Close()
	if err := sub.Err(); err != nil {
		t.Fatalf("Err after Close = %v", err)
	}
}
