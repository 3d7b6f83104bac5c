package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

var appendTests = []suiteTest{
	{"ExpectedRevision", testExpectedRevision},
	{"Result", testAppendResult},
	{"Empty", testEmptyAppend},
	{"Invalid", testInvalidAppend},
	{"IdempotentRetry", testIdempotentRetry},
	{"DuplicateID", testDuplicateID},
	{"CallerBuffers", testCallerBuffers},
}

// testCallerBuffers: Append and AppendMany keep nothing of the caller's
// buffers once they return (the audit trail encodes its batches into
// buffers it reuses): overwriting them changes nothing stored or read.
func testCallerBuffers(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	buf := []byte(`{"tag":"first","n":0}{"tag":"other","n":1}`)
	md := eventstore.Metadata{Actor: "user:buffers"}
	ev := eventstore.EventData{ID: eventstore.NewEventID(), Type: eventType, Version: 1, Data: buf[:21:21], Metadata: md}
	res := mustAppend(t, ctx, s, "buffers-a", eventstore.NoStream, ev)
	ev2 := eventstore.EventData{ID: eventstore.NewEventID(), Type: eventType, Version: 1, Data: buf[21:], Metadata: md}
	many, err := s.AppendMany(ctx, eventstore.StreamAppend{Stream: "buffers-b", Expected: eventstore.NoStream, Events: []eventstore.EventData{ev2}})
	if err != nil {
		t.Fatalf("AppendMany: %v", err)
	}
	copy(buf, `{"tag":"XXXXX","n":9}{"tag":"YYYYY","n":8}`)
	log := readLogAfter(t, ctx, s, res.Position-1, many[0].Position, 10)
	if len(log) != 2 || string(log[0].Data) != `{"tag":"first","n":0}` || string(log[1].Data) != `{"tag":"other","n":1}` {
		t.Fatalf("after the caller reused its buffer, the log holds %s", diffEvents(log, nil))
	}
	for stream, want := range map[string]string{"buffers-a": `{"tag":"first","n":0}`, "buffers-b": `{"tag":"other","n":1}`} {
		if got := streamEvents(t, ctx, s, stream); len(got) != 1 || string(got[0].Data) != want {
			t.Fatalf("after the caller reused its buffer, %s holds %s", stream, diffEvents(got, nil))
		}
	}
}

// testExpectedRevision covers every expectation on a new and an existing
// stream. A refused append returns an error matching
// ErrWrongExpectedRevision that unwraps to a *WrongExpectedRevisionError
// carrying the stream, the expectation as passed and the actual revision
// (-1 for a new stream), and writes nothing.
func testExpectedRevision(t *testing.T, h *harness) {
	tests := []struct {
		name     string
		existing int // events in the stream before the append
		exp      eventstore.ExpectedRevision
		ok       bool
	}{
		{"Any on a new stream", 0, eventstore.Any, true},
		{"Any on an existing stream", 3, eventstore.Any, true},
		{"NoStream on a new stream", 0, eventstore.NoStream, true},
		{"NoStream on an existing stream", 3, eventstore.NoStream, false},
		{"StreamExists on a new stream", 0, eventstore.StreamExists, false},
		{"StreamExists on an existing stream", 3, eventstore.StreamExists, true},
		{"Exact last revision", 3, eventstore.Exact(2), true},
		{"Exact(0) on a stream of one event", 1, eventstore.Exact(0), true},
		{"Exact behind the last revision", 3, eventstore.Exact(1), false},
		{"Exact ahead of the last revision", 3, eventstore.Exact(3), false},
		{"Exact(0) on a new stream", 0, eventstore.Exact(0), false},
		{"Exact(-1) on a new stream", 0, eventstore.Exact(-1), true},
		{"Exact(-1) on an existing stream", 3, eventstore.Exact(-1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := h.context(t)
			s := h.store(t, ctx)
			const stream = "expected-revision"
			// Another stream, longer than this one, so that a backend
			// mixing up streams or using global counts is caught.
			mustAppend(t, ctx, s, "expected-revision-other", eventstore.NoStream, newEvents("other", 5)...)
			var existing []uuid.UUID
			if tt.existing > 0 {
				evs := newEvents("existing", tt.existing)
				mustAppend(t, ctx, s, stream, eventstore.NoStream, evs...)
				existing = idsOf(evs)
			}
			before := h.settled(t, ctx, s)

			evs := newEvents("attempt", 2)
			res, err := s.Append(ctx, stream, tt.exp, evs...)
			if !tt.ok {
				expectWrongRevision(t, err, stream, tt.exp, int64(tt.existing)-1)
				if tt.existing == 0 {
					expectStreamMissing(t, ctx, s, stream)
				} else {
					sameIDs(t, "stream after the refused append", streamEvents(t, ctx, s, stream), existing)
				}
				sameEvents(t, "log after the refused append", h.settled(t, ctx, s), before)
				return
			}
			if err != nil {
				t.Fatalf("Append(%q, expected %s) on a stream of %d events: %v", stream, tt.exp, tt.existing, err)
			}
			if want := int64(tt.existing) + 1; res.Revision != want {
				t.Errorf("AppendResult.Revision = %d, want %d", res.Revision, want)
			}
			sameIDs(t, "stream after the append", streamEvents(t, ctx, s, stream), append(existing, idsOf(evs)...))
		})
	}
}

// testAppendResult: an append returns the revision and the position of its
// last event; sequential appends land in the log in the order they were
// made, with strictly increasing positions.
func testAppendResult(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	a, b, c := newEvents("a", 3), newEvents("b", 2), newEvents("c", 1)
	ra := mustAppend(t, ctx, s, "result-a", eventstore.NoStream, a...)
	rb := mustAppend(t, ctx, s, "result-b", eventstore.NoStream, b...)
	rc := mustAppend(t, ctx, s, "result-a", eventstore.Exact(2), c...)

	log := readLog(t, ctx, s, rc.Position, 100)
	want := append(append(idsOf(a), idsOf(b)...), idsOf(c)...)
	sameIDs(t, "ReadAll after three sequential appends (commit order)", log, want)
	checkLog(t, h.opts, log)
	for _, r := range []struct {
		name string
		got  eventstore.AppendResult
		last int // index in the log of the append's last event
	}{{"first append", ra, 2}, {"second append", rb, 4}, {"third append", rc, 5}} {
		if r.got.Revision != log[r.last].Revision {
			t.Errorf("%s: AppendResult.Revision = %d, want %d (the revision of its last event)", r.name, r.got.Revision, log[r.last].Revision)
		}
		if r.got.Position != log[r.last].Position {
			t.Errorf("%s: AppendResult.Position = %d, want %d (the position of its last event)", r.name, r.got.Position, log[r.last].Position)
		}
	}
	if !(ra.Position < rb.Position && rb.Position < rc.Position) {
		t.Errorf("positions of sequential appends %d, %d, %d do not strictly increase", ra.Position, rb.Position, rc.Position)
	}
	streamA := readStream(t, ctx, s, "result-a", eventstore.ReadStreamOptions{})
	sameEvents(t, "ReadStream(result-a) against ReadAll", streamA, []eventstore.RecordedEvent{log[0], log[1], log[2], log[5]})
}

// testEmptyAppend: appending no events checks the expectation, writes
// nothing (a new stream stays missing) and returns the stream's current
// revision (-1 for a new stream) with position 0.
func testEmptyAppend(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	const missing, existing = "empty-missing", "empty-existing"
	for _, exp := range []eventstore.ExpectedRevision{eventstore.Any, eventstore.NoStream, eventstore.Exact(-1)} {
		res, err := s.Append(ctx, missing, exp)
		if err != nil {
			t.Fatalf("empty Append(%q, %s) to a new stream: %v", missing, exp, err)
		}
		if res != (eventstore.AppendResult{Revision: -1, Position: 0}) {
			t.Errorf("empty Append(%q, %s) to a new stream = %+v, want {Revision:-1 Position:0}", missing, exp, res)
		}
	}
	for _, exp := range []eventstore.ExpectedRevision{eventstore.StreamExists, eventstore.Exact(0)} {
		_, err := s.Append(ctx, missing, exp)
		expectWrongRevision(t, err, missing, exp, -1)
	}
	expectStreamMissing(t, ctx, s, missing)
	if log := h.settled(t, ctx, s); len(log) != 0 {
		t.Fatalf("empty appends wrote %d events", len(log))
	}

	evs := newEvents("existing", 3)
	mustAppend(t, ctx, s, existing, eventstore.NoStream, evs...)
	for _, exp := range []eventstore.ExpectedRevision{eventstore.Any, eventstore.StreamExists, eventstore.Exact(2)} {
		res, err := s.Append(ctx, existing, exp)
		if err != nil {
			t.Fatalf("empty Append(%q, %s) to a stream at revision 2: %v", existing, exp, err)
		}
		if res != (eventstore.AppendResult{Revision: 2, Position: 0}) {
			t.Errorf("empty Append(%q, %s) to a stream at revision 2 = %+v, want {Revision:2 Position:0}", existing, exp, res)
		}
	}
	for _, exp := range []eventstore.ExpectedRevision{eventstore.NoStream, eventstore.Exact(1), eventstore.Exact(5)} {
		_, err := s.Append(ctx, existing, exp)
		expectWrongRevision(t, err, existing, exp, 2)
	}
	sameIDs(t, "stream after empty appends", streamEvents(t, ctx, s, existing), idsOf(evs))
	sameIDs(t, "log after empty appends", h.settled(t, ctx, s), idsOf(evs))
}

// testInvalidAppend: input that eventstore.Prepare refuses gets its
// *InvalidEventError (field and index) from the store, and nothing of the
// append is written, also when the other events of the append are valid,
// on a new stream as on an existing one.
func testInvalidAppend(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	const existing = "invalid-existing"
	base := newEvents("base", 2)
	mustAppend(t, ctx, s, existing, eventstore.NoStream, base...)

	valid := func() eventstore.EventData { return newEvents("valid", 1)[0] }
	with := func(modify func(*eventstore.EventData)) eventstore.EventData {
		e := valid()
		modify(&e)
		return e
	}
	sized := func(n int) json.RawMessage { return json.RawMessage(`"` + strings.Repeat("z", n-2) + `"`) }
	tests := []struct {
		name   string
		stream string // "": run against a new and an existing stream
		events func() []eventstore.EventData
		field  string
		index  int
	}{
		{"empty stream name", "\x00empty", func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"empty stream name, no events", "\x00empty", func() []eventstore.EventData { return nil }, "stream", -1},
		{"reserved stream $all", "$all", func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"reserved stream prefix", "$ce-session", func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"stream name too long", strings.Repeat("s", eventstore.MaxStreamNameLength+1), func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"stream name with NUL", "a\x00b", func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"stream name not UTF-8", "a\xffb", func() []eventstore.EventData { return []eventstore.EventData{valid()} }, "stream", -1},
		{"zero id", "", func() []eventstore.EventData {
			return []eventstore.EventData{valid(), with(func(e *eventstore.EventData) { e.ID = uuid.Nil })}
		}, "id", 1},
		{"same id twice in one append", "", func() []eventstore.EventData {
			d := valid()
			again := with(func(e *eventstore.EventData) { e.ID = d.ID })
			return []eventstore.EventData{d, valid(), again}
		}, "id", 2},
		{"empty type", "", func() []eventstore.EventData {
			return []eventstore.EventData{valid(), valid(), with(func(e *eventstore.EventData) { e.Type = "" })}
		}, "type", 2},
		{"type too long", "", func() []eventstore.EventData {
			return []eventstore.EventData{with(func(e *eventstore.EventData) { e.Type = strings.Repeat("t", eventstore.MaxTypeLength+1) })}
		}, "type", 0},
		{"negative version", "", func() []eventstore.EventData {
			return []eventstore.EventData{with(func(e *eventstore.EventData) { e.Version = -1 })}
		}, "version", 0},
		{"data not JSON", "", func() []eventstore.EventData {
			return []eventstore.EventData{valid(), with(func(e *eventstore.EventData) { e.Data = json.RawMessage(`{"a":`) })}
		}, "data", 1},
		{"data is bare text", "", func() []eventstore.EventData {
			return []eventstore.EventData{with(func(e *eventstore.EventData) { e.Data = json.RawMessage(`hello`) })}
		}, "data", 0},
		{"data over the size limit", "", func() []eventstore.EventData {
			// Zero metadata encodes as {}: 2 bytes count toward the limit.
			return []eventstore.EventData{valid(), with(func(e *eventstore.EventData) { e.Data = sized(eventstore.DefaultMaxEventSize - 1) })}
		}, "data", 1},
		{"metadata pushes the event over the size limit", "", func() []eventstore.EventData {
			return []eventstore.EventData{with(func(e *eventstore.EventData) {
				e.Metadata = eventstore.Metadata{Actor: "x"} // {"actor":"x"}: 13 bytes
				e.Data = sized(eventstore.DefaultMaxEventSize - 12)
			})}
		}, "data", 0},
		{"too many events", "", func() []eventstore.EventData {
			evs := make([]eventstore.EventData, eventstore.MaxEventsPerAppend+1)
			for i := range evs {
				evs[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: eventType}
			}
			return evs
		}, "events", -1},
	}
	for _, tt := range tests {
		targets := []string{tt.stream}
		if tt.stream == "\x00empty" {
			targets = []string{""}
		} else if tt.stream == "" {
			targets = []string{"invalid-new", existing}
		}
		for _, stream := range targets {
			name := tt.name
			if len(targets) > 1 {
				name += " to " + stream
			}
			t.Run(name, func(t *testing.T) {
				before := h.settled(t, ctx, s)
				events := tt.events()
				res, err := s.Append(ctx, stream, eventstore.Any, events...)
				if err == nil {
					t.Fatalf("Append(%.40q, %d events) succeeded with %+v; want an *InvalidEventError for %s", stream, len(events), res, tt.field)
				}
				var ie *eventstore.InvalidEventError
				if !errors.Is(err, eventstore.ErrInvalidEvent) || !errors.As(err, &ie) {
					t.Fatalf("Append(%.40q): error %v (%T) is not an *InvalidEventError matching ErrInvalidEvent", stream, err, err)
				}
				if ie.Field != tt.field || ie.Index != tt.index {
					t.Errorf("InvalidEventError names field %q index %d, want field %q index %d (%v)", ie.Field, ie.Index, tt.field, tt.index, err)
				}
				sameEvents(t, "log after the refused append", h.settled(t, ctx, s), before)
				switch {
				case stream == existing:
					sameIDs(t, "existing stream after the refused append", streamEvents(t, ctx, s, existing), idsOf(base))
				case eventstore.ValidateStreamName(stream) == nil:
					expectStreamMissing(t, ctx, s, stream)
				}
			})
		}
	}
}

// testIdempotentRetry: re-appending the events of an earlier append (same
// ids, same order, same stream) returns that append's original result,
// whatever the expected revision says, and writes nothing. The suite only
// retries whole appends; a retry of part of an append is left to the
// backend.
func testIdempotentRetry(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	const stream = "retry"
	a, b := newEvents("a", 3), newEvents("b", 2)
	ra := mustAppend(t, ctx, s, stream, eventstore.NoStream, a...)
	rb := mustAppend(t, ctx, s, stream, eventstore.Exact(2), b...)
	single := newEvents("single", 1)
	rs := mustAppend(t, ctx, s, "retry-single", eventstore.Any, single...)
	mustAppend(t, ctx, s, stream, eventstore.Exact(4), newEvents("c", 1)...)
	before := h.settled(t, ctx, s)

	expectations := []eventstore.ExpectedRevision{
		eventstore.NoStream, eventstore.Any, eventstore.StreamExists,
		eventstore.Exact(0), eventstore.Exact(2), eventstore.Exact(4), eventstore.Exact(5), eventstore.Exact(99),
	}
	for _, exp := range expectations {
		for _, r := range []struct {
			name   string
			stream string
			events []eventstore.EventData
			want   eventstore.AppendResult
		}{{"first append", stream, a, ra}, {"second append", stream, b, rb}, {"single-event append", "retry-single", single, rs}} {
			got, err := s.Append(ctx, r.stream, exp, r.events...)
			if err != nil {
				t.Fatalf("retry of the %s with expected %s: %v; want the original result %+v", r.name, exp, err, r.want)
			}
			if got != r.want {
				t.Fatalf("retry of the %s with expected %s = %+v, want the original result %+v", r.name, exp, got, r.want)
			}
		}
	}
	sameEvents(t, "log after the retries (nothing written)", h.settled(t, ctx, s), before)
}

// testDuplicateID: an append whose ids are only partly stored, stored in
// another order, or stored in another stream, is refused with an error
// matching ErrDuplicateEvent that unwraps to a *DuplicateEventError naming
// the stream of the refused append and one of its ids, and writes nothing.
func testDuplicateID(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	stored := newEvents("stored", 2)
	mustAppend(t, ctx, s, "dup", eventstore.NoStream, stored...)
	other := newEvents("other", 1)
	mustAppend(t, ctx, s, "dup-other", eventstore.NoStream, other...)
	fresh := func() eventstore.EventData { return newEvents("fresh", 1)[0] }
	before := h.settled(t, ctx, s)

	tests := []struct {
		name   string
		stream string
		exp    eventstore.ExpectedRevision
		events []eventstore.EventData
	}{
		{"stored event then a new one", "dup", eventstore.Any, []eventstore.EventData{stored[1], fresh()}},
		{"new event then a stored one", "dup", eventstore.Any, []eventstore.EventData{fresh(), stored[0]}},
		{"whole append plus a new event", "dup", eventstore.Any, []eventstore.EventData{stored[0], stored[1], fresh()}},
		{"stored events in another order", "dup", eventstore.Any, []eventstore.EventData{stored[1], stored[0]}},
		{"id stored in another stream", "dup-other", eventstore.Any, []eventstore.EventData{stored[0]}},
		{"id stored in another stream, to a new stream", "dup-new", eventstore.NoStream, []eventstore.EventData{stored[0], stored[1]}},
		{"new event then one stored in another stream", "dup", eventstore.Exact(1), []eventstore.EventData{fresh(), other[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Append(ctx, tt.stream, tt.exp, tt.events...)
			if err == nil {
				t.Fatalf("Append(%q) succeeded with %+v; want a duplicate event error", tt.stream, res)
			}
			var de *eventstore.DuplicateEventError
			if !errors.Is(err, eventstore.ErrDuplicateEvent) || !errors.As(err, &de) {
				t.Fatalf("Append(%q): error %v (%T) is not a *DuplicateEventError matching ErrDuplicateEvent", tt.stream, err, err)
			}
			if de.Stream != tt.stream {
				t.Errorf("DuplicateEventError.Stream = %q, want %q (the stream of the refused append)", de.Stream, tt.stream)
			}
			named := false
			for _, e := range tt.events {
				named = named || de.ID == e.ID
			}
			if !named {
				t.Errorf("DuplicateEventError.ID = %s is none of the append's ids", de.ID)
			}
			sameEvents(t, "log after the refused append", h.settled(t, ctx, s), before)
		})
	}
	expectStreamMissing(t, ctx, s, "dup-new")
}
