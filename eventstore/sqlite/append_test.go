package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func TestAppendThenReadBack(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()

	md := eventstore.Metadata{Actor: "alice@example.com", RequestID: "req-1", ClientIP: "10.0.0.1"}
	raw := json.RawMessage("{ \"spaced\" :  [1, 2.50, \"é\"] }\n")
	first := eventstore.EventData{ID: eventstore.NewEventID(), Type: "session.requested", Version: 3, Data: raw, Metadata: md}
	second := eventstore.EventData{ID: eventstore.NewEventID(), Type: "session.scheduled"} // no data, version 0

	before := time.Now().Add(-time.Second)
	res := mustAppend(t, s, "session-1", eventstore.NoStream, first, second)
	if res != (eventstore.AppendResult{Revision: 1, Position: 2}) {
		t.Fatalf("result = %+v, want revision 1 position 2", res)
	}
	res = mustAppend(t, s, "session-2", eventstore.NoStream, event("x", 1))
	if res != (eventstore.AppendResult{Revision: 0, Position: 3}) {
		t.Fatalf("result = %+v, want revision 0 position 3", res)
	}

	got, err := s.ReadStream(ctx, "session-1", eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d events, want 2", len(got))
	}
	e0, e1 := got[0], got[1]
	if e0.ID != first.ID || e0.Stream != "session-1" || e0.Type != "session.requested" || e0.Version != 3 ||
		e0.Revision != 0 || e0.Position != 1 || string(e0.Data) != string(raw) || e0.Metadata != md {
		t.Errorf("first event = %+v", e0)
	}
	if e1.ID != second.ID || e1.Version != 1 || string(e1.Data) != "{}" || !e1.Metadata.IsZero() || e1.Revision != 1 || e1.Position != 2 {
		t.Errorf("second event = %+v", e1)
	}
	if e0.RecordedAt.Before(before) || e0.RecordedAt.After(time.Now().Add(time.Second)) || e0.RecordedAt.Location() != time.UTC {
		t.Errorf("recorded at %v, want about now, in UTC", e0.RecordedAt)
	}
}

func TestExpectedRevision(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	mustAppend(t, s, "existing", eventstore.NoStream, events("x", 3)...) // revisions 0..2

	tests := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		actual   int64 // -2: accepted
	}{
		{"no-stream on existing", "existing", eventstore.NoStream, 2},
		{"stream-exists on missing", "missing", eventstore.StreamExists, -1},
		{"exact behind", "existing", eventstore.Exact(1), 2},
		{"exact ahead", "existing", eventstore.Exact(5), 2},
		{"exact on missing", "missing", eventstore.Exact(0), -1},
		{"exact(-1) is no-stream", "existing", eventstore.Exact(-1), 2},
	}
	for _, tt := range tests {
		_, err := s.Append(ctx, tt.stream, tt.expected, event("y", 0))
		if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			t.Errorf("%s: err = %v, want wrong expected revision", tt.name, err)
			continue
		}
		werr := asError[*eventstore.WrongExpectedRevisionError](t, err)
		if werr.Actual != tt.actual || werr.Stream != tt.stream || werr.Expected != tt.expected {
			t.Errorf("%s: %+v, want actual %d", tt.name, werr, tt.actual)
		}
	}
	if n := len(readAllEvents(t, s)); n != 3 {
		t.Fatalf("refused appends wrote: %d events stored, want 3", n)
	}

	for _, exp := range []eventstore.ExpectedRevision{eventstore.Exact(2), eventstore.StreamExists, eventstore.Any} {
		if _, err := s.Append(ctx, "existing", exp, event("y", 0)); err != nil {
			t.Errorf("append with %s: %v", exp, err)
		}
	}
	res := mustAppend(t, s, "new", eventstore.Any, event("y", 0))
	if res.Revision != 0 {
		t.Errorf("any on a new stream: revision %d, want 0", res.Revision)
	}
}

func TestEmptyAppend(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()

	res, err := s.Append(ctx, "s", eventstore.NoStream)
	if err != nil || res != (eventstore.AppendResult{Revision: -1}) {
		t.Fatalf("empty append on missing stream = %+v, %v; want revision -1", res, err)
	}
	if _, err := s.Append(ctx, "s", eventstore.StreamExists); !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		t.Fatalf("empty append with stream-exists on missing stream: %v", err)
	}
	mustAppend(t, s, "s", eventstore.NoStream, events("x", 2)...)
	res, err = s.Append(ctx, "s", eventstore.Exact(1))
	if err != nil || res != (eventstore.AppendResult{Revision: 1}) {
		t.Fatalf("empty append = %+v, %v; want revision 1 position 0", res, err)
	}
	if _, err := s.Append(ctx, "s", eventstore.Exact(0)); !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		t.Fatalf("empty append with a wrong revision: %v", err)
	}
}

func TestIdempotentRetry(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()

	batch := events("x", 3)
	first := mustAppend(t, s, "s", eventstore.NoStream, batch...)
	mustAppend(t, s, "s", eventstore.Exact(2), event("later", 0))
	mustAppend(t, s, "other", eventstore.NoStream, event("other", 0))

	// Whatever the expected revision says, the retry returns the original
	// result and writes nothing.
	for _, exp := range []eventstore.ExpectedRevision{eventstore.NoStream, eventstore.Exact(-1), eventstore.Exact(7), eventstore.Any} {
		res, err := s.Append(ctx, "s", exp, batch...)
		if err != nil || res != first {
			t.Errorf("retry with %s = %+v, %v; want %+v", exp, res, err, first)
		}
	}
	// A single-event retry, and a retry of the middle of the stream.
	one := mustAppend(t, s, "s", eventstore.Any, batch[1:2]...)
	if one != (eventstore.AppendResult{Revision: 1, Position: 2}) {
		t.Errorf("retry of event 1 = %+v", one)
	}
	tail := mustAppend(t, s, "s", eventstore.Any, batch[1:]...)
	if tail != first {
		t.Errorf("retry of events 1..2 = %+v, want %+v", tail, first)
	}
	if n := len(readAllEvents(t, s)); n != 5 {
		t.Fatalf("%d events stored, want 5", n)
	}
}

func TestRetryThatOnlyPartlyMatchesIsRefused(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	stored := events("x", 2)
	mustAppend(t, s, "s", eventstore.NoStream, stored...)
	fresh := event("x", 9)

	tests := []struct {
		name   string
		events []eventstore.EventData
		dupID  eventstore.EventData
	}{
		{"same first, different second", []eventstore.EventData{stored[0], fresh}, fresh},
		{"more events than stored", []eventstore.EventData{stored[0], stored[1], fresh}, fresh},
		{"reordered", []eventstore.EventData{stored[1], stored[0]}, stored[0]},
		{"stored id after a new one", []eventstore.EventData{fresh, stored[1]}, stored[1]},
	}
	for _, tt := range tests {
		_, err := s.Append(ctx, "s", eventstore.Any, tt.events...)
		if !errors.Is(err, eventstore.ErrDuplicateEvent) {
			t.Errorf("%s: err = %v, want duplicate", tt.name, err)
			continue
		}
		if d := asError[*eventstore.DuplicateEventError](t, err); d.ID != tt.dupID.ID || d.Stream != "s" {
			t.Errorf("%s: %+v, want id %s", tt.name, d, tt.dupID.ID)
		}
	}
	if n := len(readAllEvents(t, s)); n != 2 {
		t.Fatalf("refused retries wrote: %d events stored, want 2", n)
	}
}

func TestIDStoredInAnotherStreamIsRefused(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	taken := event("x", 0)
	mustAppend(t, s, "a", eventstore.NoStream, taken)

	for _, evs := range [][]eventstore.EventData{
		{taken},
		{event("x", 1), taken}, // found half-way: the first insert is undone
	} {
		_, err := s.Append(ctx, "b", eventstore.Any, evs...)
		if d := asError[*eventstore.DuplicateEventError](t, err); d.ID != taken.ID || d.Stream != "b" {
			t.Errorf("%+v, want id %s in stream b", d, taken.ID)
		}
	}
	if _, err := s.ReadStream(ctx, "b", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("stream b after refused appends: %v, want not found", err)
	}
	// The positions the refused appends would have taken are reused.
	if res := mustAppend(t, s, "b", eventstore.NoStream, event("x", 2)); res.Position != 2 {
		t.Fatalf("next position = %d, want 2 (dense)", res.Position)
	}
}

func TestInvalidAppendIsRefusedBeforeQueueing(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{MaxEventSize: 64})
	ctx := context.Background()
	big := event("x", 0)
	big.Data = json.RawMessage(`{"pad":"` + strings.Repeat("a", 100) + `"}`)
	for name, evs := range map[string][]eventstore.EventData{
		"nil id":   {{Type: "x"}},
		"no type":  {{ID: eventstore.NewEventID()}},
		"bad json": {{ID: eventstore.NewEventID(), Type: "x", Data: json.RawMessage(`{`)}},
		"too big":  {big},
	} {
		if _, err := s.Append(ctx, "s", eventstore.Any, evs...); !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Errorf("%s: err = %v, want invalid event", name, err)
		}
	}
	if _, err := s.Append(ctx, "$all", eventstore.Any, event("x", 0)); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("reserved stream name: %v", err)
	}
	if got := s.writer.appendsRun.Load(); got != 0 {
		t.Fatalf("%d invalid appends reached the writer", got)
	}
}
