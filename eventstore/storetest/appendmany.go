package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

var appendManyTests = []suiteTest{
	{"Result", testAppendManyResult},
	{"AllOrNothing", testAppendManyAllOrNothing},
	{"IdempotentRetry", testAppendManyRetry},
	{"Invalid", testAppendManyInvalid},
	{"Concurrent", testAppendManyConcurrent},
}

// mustAppendMany makes an AppendMany that must succeed.
func mustAppendMany(t *testing.T, ctx context.Context, s eventstore.Store, parts ...eventstore.StreamAppend) []eventstore.AppendResult {
	t.Helper()
	res, err := s.AppendMany(ctx, parts...)
	if err != nil {
		t.Fatalf("AppendMany(%d parts): %v", len(parts), err)
	}
	if len(res) != len(parts) {
		t.Fatalf("AppendMany(%d parts) returned %d results", len(parts), len(res))
	}
	return res
}

// testAppendManyResult: every part gets the revision and position of its
// last event (a part of no events: the stream's revision and position 0);
// the events land in the log in the order of the parts, with nothing
// between them, each stream's revisions following its earlier events.
func testAppendManyResult(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	mustAppend(t, ctx, s, "many-b", eventstore.NoStream, newEvents("b0", 2)...)
	a, b, c := newEvents("a", 2), newEvents("b", 1), newEvents("c", 3)
	res := mustAppendMany(t, ctx, s,
		eventstore.StreamAppend{Stream: "many-a", Expected: eventstore.NoStream, Events: a},
		eventstore.StreamAppend{Stream: "many-b", Expected: eventstore.Exact(1), Events: b},
		eventstore.StreamAppend{Stream: "many-empty", Expected: eventstore.Any},
		eventstore.StreamAppend{Stream: "many-c", Expected: eventstore.Any, Events: c},
	)
	log := h.settled(t, ctx, s)[2:]
	sameIDs(t, "log after AppendMany (the parts' events in order)", log, slices.Concat(idsOf(a), idsOf(b), idsOf(c)))
	for i, want := range []eventstore.AppendResult{
		{Revision: 1, Position: log[1].Position},
		{Revision: 2, Position: log[2].Position},
		{Revision: -1},
		{Revision: 2, Position: log[5].Position},
	} {
		if res[i] != want {
			t.Errorf("result of part %d = %+v, want %+v", i, res[i], want)
		}
	}
	sameIDs(t, "stream many-b", streamEvents(t, ctx, s, "many-b")[2:], idsOf(b))
	expectStreamMissing(t, ctx, s, "many-empty")
	if empty, err := s.AppendMany(ctx); err != nil || len(empty) != 0 {
		t.Errorf("AppendMany() = %v, %v; want no results and no error", empty, err)
	}
}

// testAppendManyAllOrNothing: one refused part (a wrong expected revision,
// an id stored in another stream, a partial retry) refuses the call with
// that part's error, naming its stream, and nothing of the other parts is
// written, whatever their place in the call.
func testAppendManyAllOrNothing(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	stored := newEvents("stored", 2)
	mustAppend(t, ctx, s, "aon-existing", eventstore.NoStream, stored...)
	fresh := func(tag string) []eventstore.EventData { return newEvents(tag, 2) }
	more := newEvents("more", 1)[0]
	tests := []struct {
		name  string
		parts func() []eventstore.StreamAppend
		check func(t *testing.T, err error)
	}{
		{"wrong expected revision in the last part", func() []eventstore.StreamAppend {
			return []eventstore.StreamAppend{
				{Stream: "aon-new", Expected: eventstore.NoStream, Events: fresh("new")},
				{Stream: "aon-existing", Expected: eventstore.Exact(0), Events: fresh("late")},
			}
		}, func(t *testing.T, err error) { expectWrongRevision(t, err, "aon-existing", eventstore.Exact(0), 1) }},
		{"wrong expected revision in the first part", func() []eventstore.StreamAppend {
			return []eventstore.StreamAppend{
				{Stream: "aon-existing", Expected: eventstore.NoStream, Events: fresh("first")},
				{Stream: "aon-new", Expected: eventstore.Any, Events: fresh("new")},
			}
		}, func(t *testing.T, err error) { expectWrongRevision(t, err, "aon-existing", eventstore.NoStream, 1) }},
		{"empty part expecting a stream that does not exist", func() []eventstore.StreamAppend {
			return []eventstore.StreamAppend{
				{Stream: "aon-new", Expected: eventstore.Any, Events: fresh("new")},
				{Stream: "aon-missing", Expected: eventstore.StreamExists},
			}
		}, func(t *testing.T, err error) { expectWrongRevision(t, err, "aon-missing", eventstore.StreamExists, -1) }},
		{"id stored in another stream", func() []eventstore.StreamAppend {
			return []eventstore.StreamAppend{
				{Stream: "aon-new", Expected: eventstore.Any, Events: fresh("new")},
				{Stream: "aon-other", Expected: eventstore.Any, Events: []eventstore.EventData{stored[0]}},
			}
		}, func(t *testing.T, err error) { expectDuplicate(t, err, "aon-other", stored[0].ID) }},
		{"partial retry", func() []eventstore.StreamAppend {
			return []eventstore.StreamAppend{
				{Stream: "aon-existing", Expected: eventstore.Any, Events: []eventstore.EventData{stored[1], more}},
				{Stream: "aon-new", Expected: eventstore.Any, Events: fresh("new")},
			}
		}, func(t *testing.T, err error) { expectDuplicate(t, err, "aon-existing", stored[1].ID, more.ID) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.settled(t, ctx, s)
			res, err := s.AppendMany(ctx, tt.parts()...)
			if err == nil {
				t.Fatalf("AppendMany succeeded with %+v; want the refused part's error", res)
			}
			tt.check(t, err)
			sameEvents(t, "log after the refused AppendMany", h.settled(t, ctx, s), before)
			expectStreamMissing(t, ctx, s, "aon-new")
		})
	}
}

// expectDuplicate checks that err is a duplicate event error naming stream
// and one of ids.
func expectDuplicate(t *testing.T, err error, stream string, ids ...uuid.UUID) {
	t.Helper()
	var de *eventstore.DuplicateEventError
	if !errors.Is(err, eventstore.ErrDuplicateEvent) || !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DuplicateEventError matching ErrDuplicateEvent", err, err)
	}
	if de.Stream != stream {
		t.Errorf("DuplicateEventError.Stream = %q, want %q (the refused part's stream)", de.Stream, stream)
	}
	if !slices.Contains(ids, de.ID) {
		t.Errorf("DuplicateEventError.ID = %s, want one of %v", de.ID, ids)
	}
}

// testAppendManyRetry: repeating an AppendMany returns the original
// results and writes nothing, whatever the expectations say; a part that
// repeats an earlier append gets that append's result while the call's
// other parts are written.
func testAppendManyRetry(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	parts := []eventstore.StreamAppend{
		{Stream: "retry-many-a", Expected: eventstore.NoStream, Events: newEvents("a", 2)},
		{Stream: "retry-many-b", Expected: eventstore.NoStream, Events: newEvents("b", 1)},
	}
	first := mustAppendMany(t, ctx, s, parts...)
	mustAppend(t, ctx, s, "retry-many-a", eventstore.Exact(1), newEvents("later", 1)...)
	before := h.settled(t, ctx, s)
	for _, exp := range []eventstore.ExpectedRevision{eventstore.NoStream, eventstore.Any, eventstore.Exact(7)} {
		again := slices.Clone(parts)
		for i := range again {
			again[i].Expected = exp
		}
		if got := mustAppendMany(t, ctx, s, again...); !slices.Equal(got, first) {
			t.Fatalf("retry with expected %s = %+v, want the original %+v", exp, got, first)
		}
	}
	sameEvents(t, "log after the retries (nothing written)", h.settled(t, ctx, s), before)

	c := newEvents("c", 2)
	got := mustAppendMany(t, ctx, s, parts[1], eventstore.StreamAppend{Stream: "retry-many-c", Expected: eventstore.NoStream, Events: c})
	if got[0] != first[1] {
		t.Errorf("repeated part = %+v, want its original result %+v", got[0], first[1])
	}
	if got[1].Revision != 1 {
		t.Errorf("new part = %+v, want revision 1", got[1])
	}
	sameIDs(t, "log after a retried part and a new one", h.settled(t, ctx, s)[len(before):], idsOf(c))
}

// testAppendManyInvalid: what PrepareMany refuses — a stream in two parts,
// an id in two parts, an invalid event (named with its part's stream),
// too many parts — is an *InvalidEventError and writes nothing.
func testAppendManyInvalid(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	dup := newEvents("dup", 1)
	bad := newEvents("bad", 2)
	bad[1].Type = ""
	many := make([]eventstore.StreamAppend, eventstore.MaxStreamsPerAppend+1)
	for i := range many {
		many[i] = eventstore.StreamAppend{Stream: fmt.Sprintf("invalid-many-%d", i), Expected: eventstore.Any, Events: newEvents("many", 1)}
	}
	tests := []struct {
		name   string
		parts  []eventstore.StreamAppend
		field  string
		stream string
	}{
		{"same stream twice", []eventstore.StreamAppend{
			{Stream: "invalid-a", Expected: eventstore.Any, Events: newEvents("a", 1)},
			{Stream: "invalid-a", Expected: eventstore.Any, Events: newEvents("a", 1)},
		}, "stream", "invalid-a"},
		{"same id in two parts", []eventstore.StreamAppend{
			{Stream: "invalid-a", Expected: eventstore.Any, Events: dup},
			{Stream: "invalid-b", Expected: eventstore.Any, Events: dup},
		}, "id", "invalid-b"},
		{"invalid event", []eventstore.StreamAppend{
			{Stream: "invalid-a", Expected: eventstore.Any, Events: newEvents("a", 1)},
			{Stream: "invalid-b", Expected: eventstore.Any, Events: bad},
		}, "type", "invalid-b"},
		{"too many parts", many, "parts", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.settled(t, ctx, s)
			res, err := s.AppendMany(ctx, tt.parts...)
			var ie *eventstore.InvalidEventError
			if !errors.Is(err, eventstore.ErrInvalidEvent) || !errors.As(err, &ie) {
				t.Fatalf("AppendMany = %+v, %v (%T); want an *InvalidEventError", res, err, err)
			}
			if ie.Field != tt.field || ie.Stream != tt.stream {
				t.Errorf("InvalidEventError names field %q stream %q, want %q %q (%v)", ie.Field, ie.Stream, tt.field, tt.stream, err)
			}
			sameEvents(t, "log after the refused AppendMany", h.settled(t, ctx, s), before)
		})
	}
}

// testAppendManyConcurrent: writers make AppendMany calls over random,
// overlapping sets of streams (in random order) with exact expectations,
// re-reading the refused streams and trying again, while single appends
// race on the same streams. No call deadlocks; every stream ends dense;
// every call's events are contiguous in the log and in its parts' order;
// a subscription from the start delivers the whole log exactly once, in
// order.
func testAppendManyConcurrent(t *testing.T, h *harness) {
	const writers, calls, streams = 6, 25, 12
	ctx := h.context(t)
	s := h.store(t, ctx)
	sub := subscribe(t, ctx, s, 0)
	name := func(i int) string { return fmt.Sprintf("concurrent-many-%d", i) }

	var mu sync.Mutex
	var written [][]uuid.UUID // per successful AppendMany, its event ids in order
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			revs := map[string]int64{}
			for i := 0; i < calls; {
				picked := rng.Perm(streams)[:2+rng.IntN(4)]
				var parts []eventstore.StreamAppend
				var ids []uuid.UUID
				for _, p := range picked {
					rev, ok := revs[name(p)]
					if !ok {
						rev = -1
					}
					evs := newEvents(fmt.Sprintf("w%d call %d", w, i), 1+rng.IntN(2))
					parts = append(parts, eventstore.StreamAppend{Stream: name(p), Expected: eventstore.Exact(rev), Events: evs})
					ids = append(ids, idsOf(evs)...)
				}
				res, err := s.AppendMany(ctx, parts...)
				var we *eventstore.WrongExpectedRevisionError
				switch {
				case errors.As(err, &we):
					revs[we.Stream] = we.Actual
					continue
				case err != nil:
					errs <- fmt.Errorf("writer %d: AppendMany: %w", w, err)
					return
				}
				for j, p := range parts {
					revs[p.Stream] = res[j].Revision
				}
				mu.Lock()
				written = append(written, ids)
				mu.Unlock()
				i++
			}
		})
	}
	wg.Go(func() {
		for i := range writers * calls {
			if _, err := s.Append(ctx, name(i%streams), eventstore.Any, newEvents("single", 1)...); err != nil {
				errs <- fmt.Errorf("single append: %w", err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	end := mustAppend(t, ctx, s, sentinelStream, eventstore.Any, newEvents("sentinel", 1)...)
	log := readLog(t, ctx, s, end.Position, 1000)
	checkLog(t, h.opts, log)
	at := make(map[uuid.UUID]int, len(log))
	for i, e := range log {
		at[e.ID] = i
	}
	for _, ids := range written {
		start, ok := at[ids[0]]
		for j, id := range ids {
			if i, found := at[id]; !ok || !found || i != start+j {
				t.Fatalf("the events of one AppendMany are not contiguous and in order in the log (event %d of %d)", j, len(ids))
			}
		}
	}
	for i, want := range log {
		m := next(t, ctx, sub, fmt.Sprintf("event %d of %d", i+1, len(log)))
		for m.CaughtUp { // once, somewhere along the log
			m = next(t, ctx, sub, fmt.Sprintf("event %d of %d", i+1, len(log)))
		}
		if d := diffEvent(m.Event, want); d != "" {
			t.Fatalf("subscription from the start, event %d of %d: %s", i+1, len(log), d)
		}
	}
}
