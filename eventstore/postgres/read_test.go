package postgres

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func TestReadStream(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	if _, err := s.Append(ctx, "s", eventstore.NoStream, events(t, "s", 5)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "other", eventstore.NoStream, events(t, "o", 2)...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts eventstore.ReadStreamOptions
		want []int64 // revisions
	}{
		{"forward all", eventstore.ReadStreamOptions{}, []int64{0, 1, 2, 3, 4}},
		{"forward from 2", eventstore.ReadStreamOptions{From: 2}, []int64{2, 3, 4}},
		{"forward from 1 limit 2", eventstore.ReadStreamOptions{From: 1, Limit: 2}, []int64{1, 2}},
		{"forward negative from", eventstore.ReadStreamOptions{From: -5, Limit: 1}, []int64{0}},
		{"forward past the end", eventstore.ReadStreamOptions{From: 5}, []int64{}},
		{"backward from end", eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd}, []int64{4, 3, 2, 1, 0}},
		{"backward from end limit 1", eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1}, []int64{4}},
		{"backward from 2", eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: 2}, []int64{2, 1, 0}},
		{"backward from beyond the end", eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: 100, Limit: 2}, []int64{4, 3}},
		{"backward from 0", eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: 0}, []int64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ReadStream(ctx, "s", tt.opts)
			if err != nil {
				t.Fatalf("ReadStream: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events, want %d", len(got), len(tt.want))
			}
			for i, ev := range got {
				if ev.Revision != tt.want[i] || ev.Stream != "s" {
					t.Errorf("event %d: %s@%d, want s@%d", i, ev.Stream, ev.Revision, tt.want[i])
				}
			}
		})
	}

	_, err := s.ReadStream(ctx, "missing", eventstore.ReadStreamOptions{})
	var nf *eventstore.StreamNotFoundError
	if !errors.As(err, &nf) || nf.Stream != "missing" {
		t.Errorf("missing stream: %v, want *StreamNotFoundError", err)
	}
	if _, err := s.ReadStream(ctx, "s", eventstore.ReadStreamOptions{Direction: 9}); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("unknown direction: %v, want an invalid-event error", err)
	}
}

func TestReadAllPages(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{ReadAllLimit: 3})
	ctx := t.Context()
	var last uint64
	for i := range 4 {
		res, err := s.Append(ctx, "s", eventstore.Any, events(t, "p", i+1)...)
		if err != nil {
			t.Fatal(err)
		}
		last = res.Position
	}
	all := subscribeN(t, s, 0, 10, 30*time.Second)
	if all[9].Position != last {
		t.Fatalf("last position %d, Append returned %d", all[9].Position, last)
	}
	// Pages of every size reassemble into the same sequence.
	for _, size := range []int{1, 2, 3, 7} {
		var got []eventstore.RecordedEvent
		var after uint64
		for {
			page, err := s.ReadAll(ctx, after, size)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > size {
				t.Fatalf("page of %d events, limit %d", len(page), size)
			}
			got = append(got, page...)
			after = page[len(page)-1].Position
		}
		if len(got) != len(all) {
			t.Fatalf("size %d: %d events, want %d", size, len(got), len(all))
		}
		for i := range got {
			if got[i].ID != all[i].ID {
				t.Fatalf("size %d: event %d differs", size, i)
			}
		}
	}
	if page, err := s.ReadAll(ctx, 0, 0); err != nil || len(page) != 3 {
		t.Errorf("ReadAll with limit 0 = %d events, %v; want ReadAllLimit (3)", len(page), err)
	}
	if page, err := s.ReadAll(ctx, math.MaxUint64, 10); err != nil || len(page) != 0 {
		t.Errorf("ReadAll after the largest position = %d events, %v", len(page), err)
	}
}
