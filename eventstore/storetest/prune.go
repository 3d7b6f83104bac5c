package storetest

import (
	"errors"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// pruneTests run when Options.Prune declares that the store is an
// eventstore.Pruner.
var pruneTests = []suiteTest{
	{"KeepsPositionsAndRevisions", testPruneKeepsPositionsAndRevisions},
	{"Refusals", testPruneRefusals},
}

func pruner(t *testing.T, s eventstore.Store) eventstore.Pruner {
	t.Helper()
	p, ok := s.(eventstore.Pruner)
	if !ok {
		t.Fatalf("Options.Prune is set, but %T is not an eventstore.Pruner", s)
	}
	return p
}

var tomb = eventstore.Tombstone{Type: "test.pruned", Data: []byte(`{"why":"archived"}`)}

// testPruneKeepsPositionsAndRevisions: a prune replaces the old events'
// type, data and metadata by the tombstone's and changes nothing else of
// the log: ids, positions, revisions and times stay, the log's invariants
// hold, another stream is untouched, a subscription from the start
// delivers every event (tombstones where the pruned ones were), the
// stream's next append expects its last revision as before, and a retry
// changes nothing.
func testPruneKeepsPositionsAndRevisions(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	p := pruner(t, s)
	const stream, other = "prune-stream", "prune-other"
	evs := newEvents("p", 3)
	evs[0].Metadata = eventstore.Metadata{Actor: "someone"}
	mustAppend(t, ctx, s, stream, eventstore.NoStream, evs...)
	mustAppend(t, ctx, s, other, eventstore.NoStream, newEvents("o", 2)...)
	mustAppend(t, ctx, s, stream, eventstore.Exact(2), newEvents("p", 2)...)
	before := h.settled(t, ctx, s)

	n, err := p.Prune(ctx, stream, 3, tomb)
	if err != nil || n != 3 {
		t.Fatalf("Prune(before 3) = %d, %v; want 3 events pruned", n, err)
	}
	after := h.settled(t, ctx, s)
	if len(after) != len(before) {
		t.Fatalf("the log holds %d events after the prune, %d before", len(after), len(before))
	}
	var want []eventstore.RecordedEvent
	for _, e := range before {
		if e.Stream == stream && e.Revision < 3 {
			e.Type, e.Version, e.Data, e.Metadata = tomb.Type, 1, tomb.Data, eventstore.Metadata{}
		}
		want = append(want, e)
	}
	sameEvents(t, "the log after the prune", after, want)
	var wantStream []eventstore.RecordedEvent
	for _, e := range want {
		if e.Stream == stream {
			wantStream = append(wantStream, e)
		}
	}
	sameEvents(t, "the pruned stream", streamEvents(t, ctx, s, stream), wantStream)

	sub := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, sub, want)
	closeSub(t, ctx, sub)

	if n, err := p.Prune(ctx, stream, 3, tomb); err != nil || n != 0 {
		t.Fatalf("a retry of the prune = %d, %v; want nothing changed", n, err)
	}
	mustAppend(t, ctx, s, stream, eventstore.Exact(4), newEvents("p", 1)...)
	// A later prune reaches further, over the tombstones already there.
	if n, err := p.Prune(ctx, stream, 5, tomb); err != nil || n != 2 {
		t.Fatalf("Prune(before 5) = %d, %v; want 2 more events pruned", n, err)
	}
	h.settled(t, ctx, s) // checks the log's invariants
}

// testPruneRefusals: the stream's last event is never pruned, a missing
// stream is not found, bad arguments are refused; nothing changes.
func testPruneRefusals(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	p := pruner(t, s)
	const stream = "prune-refused"
	mustAppend(t, ctx, s, stream, eventstore.NoStream, newEvents("r", 3)...)
	before := h.settled(t, ctx, s)
	for _, c := range []struct {
		name   string
		stream string
		before int64
		tomb   eventstore.Tombstone
		want   error
	}{
		{"the last event", stream, 3, tomb, eventstore.ErrPrune},
		{"past the end", stream, 10, tomb, eventstore.ErrPrune},
		{"negative revision", stream, -1, tomb, eventstore.ErrPrune},
		{"no tombstone type", stream, 1, eventstore.Tombstone{Data: []byte(`{}`)}, eventstore.ErrPrune},
		{"tombstone data not JSON", stream, 1, eventstore.Tombstone{Type: "t", Data: []byte(`{`)}, eventstore.ErrPrune},
		{"missing stream", "prune-nothing-here", 1, tomb, eventstore.ErrStreamNotFound},
	} {
		if n, err := p.Prune(ctx, c.stream, c.before, c.tomb); !errors.Is(err, c.want) || n != 0 {
			t.Errorf("%s: %d, %v; want %v", c.name, n, err, c.want)
		}
	}
	after := h.settled(t, ctx, s)
	sameEvents(t, "the log after refused prunes", after[:len(before)], before)
	if n, err := p.Prune(ctx, stream, 0, tomb); err != nil || n != 0 {
		t.Fatalf("Prune(before 0) = %d, %v; want nothing to do", n, err)
	}
}
