package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// manyParts is an AppendMany of n streams "big-<i>" with 1 to 3 events
// each (more than manyRows streams and events, so the batched lookups and
// INSERTs run full and partial), expecting the revisions in expected (by
// stream; absent: NoStream).
func manyParts(n int, expected map[string]int64) []eventstore.StreamAppend {
	parts := make([]eventstore.StreamAppend, n)
	for i := range parts {
		stream := fmt.Sprintf("big-%d", i)
		exp := eventstore.NoStream
		if rev, ok := expected[stream]; ok {
			exp = eventstore.Exact(rev)
		}
		parts[i] = eventstore.StreamAppend{Stream: stream, Expected: exp, Events: events("e", 1+i%3)}
	}
	return parts
}

// TestAppendManyBatched: a large AppendMany (written with batched lookups
// and INSERTs) gives each part the result and the stream the revisions
// Append would; its retry gets the same results; a duplicate id deep in
// it or a wrong expectation late in it refuses it whole.
func TestAppendManyBatched(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	// Some streams exist already, at various revisions.
	expected := map[string]int64{}
	for _, i := range []int{0, 33, 64, 99} {
		stream := fmt.Sprintf("big-%d", i)
		r := mustAppend(t, s, stream, eventstore.NoStream, events("pre", 1+i%2)...)
		expected[stream] = r.Revision
	}
	before := len(readAllEvents(t, s))
	parts := manyParts(100, expected)
	res, err := s.AppendMany(ctx, parts...)
	if err != nil {
		t.Fatal(err)
	}
	log := readAllEvents(t, s)[before:]
	k := 0
	for i, p := range parts {
		first := expected[p.Stream] + 1
		if _, ok := expected[p.Stream]; !ok {
			first = 0
		}
		for j, ev := range p.Events {
			got := log[k]
			if got.ID != ev.ID || got.Stream != p.Stream || got.Revision != first+int64(j) {
				t.Fatalf("event %d of part %d: stored %s %s@%d, want %s %s@%d", j, i, got.ID, got.Stream, got.Revision, ev.ID, p.Stream, first+int64(j))
			}
			k++
		}
		want := eventstore.AppendResult{Revision: first + int64(len(p.Events)) - 1, Position: log[k-1].Position}
		if res[i] != want {
			t.Fatalf("part %d: result %+v, want %+v", i, res[i], want)
		}
	}
	if k != len(log) {
		t.Fatalf("%d events stored, want %d", len(log), k)
	}

	again, err := s.AppendMany(ctx, parts...)
	if err != nil || !slices.Equal(again, res) {
		t.Fatalf("retry: %+v, %v; want the first results", again, err)
	}

	// A duplicate id: the 40th part's second event is an event stored in
	// another stream.
	head := len(readAllEvents(t, s))
	dup := manyParts(60, nil)
	for i := range dup {
		dup[i].Stream = fmt.Sprintf("dup-%d", i)
	}
	dup[40].Events = append(dup[40].Events[:1], eventstore.EventData{ID: parts[3].Events[0].ID, Type: "e", Version: 1, Data: []byte(`{}`)})
	if _, err := s.AppendMany(ctx, dup...); !errors.Is(err, eventstore.ErrDuplicateEvent) {
		t.Fatalf("AppendMany with a stored id: %v, want a duplicate event error", err)
	}
	// A wrong expectation on a late part.
	late := manyParts(60, nil)
	for i := range late {
		late[i].Stream = fmt.Sprintf("late-%d", i)
	}
	late[55].Expected = eventstore.Exact(4)
	if _, err := s.AppendMany(ctx, late...); !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		t.Fatalf("AppendMany with a wrong expectation: %v, want a wrong expected revision", err)
	}
	if n := len(readAllEvents(t, s)); n != head {
		t.Fatalf("the refused AppendMany calls left %d events", n-head)
	}
	// The refused ones can be made afterwards, whole.
	dup[40].Events = dup[40].Events[:1]
	if _, err := s.AppendMany(ctx, dup...); err != nil {
		t.Fatal(err)
	}
}
