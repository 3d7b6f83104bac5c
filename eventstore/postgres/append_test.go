package postgres

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/pgtest"
)

func TestAppendRoundTripsBytesExactly(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	md := eventstore.Metadata{Actor: "alice", AccessKey: "AK", ActingAs: "bob", RequestID: "r1", CausationID: "c1", ClientIP: "10.0.0.1"}
	in := []eventstore.EventData{
		// Key order, white space, escapes and non-ASCII must survive: jsonb
		// would rewrite all of them.
		{ID: eventstore.NewEventID(), Type: "t.one", Version: 3, Data: []byte(`{ "z": 1,  "a" : [1, 2.50, "\u00e9"], "dup": 1, "dup": 2 }`), Metadata: md},
		{ID: eventstore.NewEventID(), Type: "t.two", Data: nil},
		{ID: eventstore.NewEventID(), Type: "t.three", Data: []byte(`"snow ☃ \u0000"`)},
	}
	before := time.Now().Add(-time.Second)
	res, err := s.Append(ctx, "session-1", eventstore.NoStream, in...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if res.Revision != 2 || res.Position == 0 {
		t.Fatalf("Append = %+v, want revision 2 and a position", res)
	}
	got, err := s.ReadStream(ctx, "session-1", eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("ReadStream returned %d events, want 3", len(got))
	}
	wantData := [][]byte{in[0].Data, []byte(`{}`), in[2].Data}
	wantVersion := []int{3, 1, 1}
	for i, ev := range got {
		if ev.ID != in[i].ID || ev.Type != in[i].Type || ev.Stream != "session-1" || ev.Revision != int64(i) {
			t.Errorf("event %d = %+v, want id %s type %s revision %d", i, ev, in[i].ID, in[i].Type, i)
		}
		if !bytes.Equal(ev.Data, wantData[i]) {
			t.Errorf("event %d data = %q, want %q", i, ev.Data, wantData[i])
		}
		if ev.Version != wantVersion[i] {
			t.Errorf("event %d version = %d, want %d", i, ev.Version, wantVersion[i])
		}
		if ev.Metadata != in[i].Metadata {
			t.Errorf("event %d metadata = %+v, want %+v", i, ev.Metadata, in[i].Metadata)
		}
		if ev.RecordedAt.Location() != time.UTC || ev.RecordedAt.Before(before) || ev.RecordedAt.After(time.Now().Add(time.Second)) {
			t.Errorf("event %d recorded_at = %v, want a recent UTC time", i, ev.RecordedAt)
		}
		if i > 0 && ev.Position != got[i-1].Position+1 {
			t.Errorf("event %d position = %d, want %d (consecutive within an append)", i, ev.Position, got[i-1].Position+1)
		}
	}
	if got[2].Position != res.Position {
		t.Errorf("last position = %d, Append returned %d", got[2].Position, res.Position)
	}
}

func TestAppendExpectedRevision(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	if _, err := s.Append(ctx, "existing", eventstore.NoStream, events(t, "e", 3)...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		actual   int64 // -2: no error expected
	}{
		{"any on existing", "existing", eventstore.Any, -2},
		{"exists on existing", "existing", eventstore.StreamExists, -2},
		{"exact match", "existing", eventstore.Exact(2), -2},
		{"exact stale", "existing", eventstore.Exact(1), 2},
		{"exact ahead", "existing", eventstore.Exact(9), 2},
		{"no stream on existing", "existing", eventstore.NoStream, 2},
		{"exists on missing", "missing", eventstore.StreamExists, -1},
		{"exact on missing", "missing", eventstore.Exact(0), -1},
		{"no stream on missing", "missing", eventstore.NoStream, -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Zero events: checks the expectation without writing, so the
			// cases do not disturb each other.
			res, err := s.Append(ctx, tt.stream, tt.expected)
			if tt.actual == -2 {
				if err != nil {
					t.Fatalf("Append: %v", err)
				}
				if res.Position != 0 {
					t.Errorf("empty append position = %d, want 0", res.Position)
				}
				return
			}
			var wrong *eventstore.WrongExpectedRevisionError
			if !errors.As(err, &wrong) || !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
				t.Fatalf("Append error = %v, want *WrongExpectedRevisionError", err)
			}
			if wrong.Actual != tt.actual || wrong.Stream != tt.stream || wrong.Expected != tt.expected {
				t.Errorf("error = %+v, want actual %d", wrong, tt.actual)
			}
		})
	}

	// The same with events: a refused append writes nothing.
	_, err := s.Append(ctx, "existing", eventstore.Exact(1), event(t, "late"))
	var wrong *eventstore.WrongExpectedRevisionError
	if !errors.As(err, &wrong) || wrong.Actual != 2 {
		t.Fatalf("Append with a stale revision = %v, want actual 2", err)
	}
	res, err := s.Append(ctx, "existing", eventstore.Exact(2), event(t, "next"))
	if err != nil || res.Revision != 3 {
		t.Fatalf("Append = %+v, %v; want revision 3", res, err)
	}
	res, err = s.Append(ctx, "existing", eventstore.Any)
	if err != nil || res.Revision != 3 || res.Position != 0 {
		t.Fatalf("empty Append = %+v, %v; want revision 3, position 0", res, err)
	}
}

func TestAppendIdempotentRetry(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	if _, err := s.Append(ctx, "s", eventstore.NoStream, event(t, "first")); err != nil {
		t.Fatal(err)
	}
	batch := events(t, "batch", 3)
	orig, err := s.Append(ctx, "s", eventstore.Exact(0), batch...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", eventstore.Any, event(t, "after")); err != nil {
		t.Fatal(err)
	}

	// The full retry, even with the expectation that held the first time.
	for _, exp := range []eventstore.ExpectedRevision{eventstore.Exact(0), eventstore.Any, eventstore.NoStream} {
		res, err := s.Append(ctx, "s", exp, batch...)
		if err != nil || res != orig {
			t.Fatalf("retry with %s = %+v, %v; want %+v", exp, res, err, orig)
		}
	}
	// A prefix of the batch is a retry too, with its own last event.
	res, err := s.Append(ctx, "s", eventstore.Any, batch[:2]...)
	if err != nil || res.Revision != 2 || res.Position != orig.Position-1 {
		t.Fatalf("prefix retry = %+v, %v; want revision 2 position %d", res, err, orig.Position-1)
	}

	if n := streamLen(t, s, "s"); n != 5 {
		t.Fatalf("stream holds %d events, want 5 (retries write nothing)", n)
	}

	var dup *eventstore.DuplicateEventError
	// Reordered retry.
	_, err = s.Append(ctx, "s", eventstore.Any, batch[0], batch[2], batch[1])
	if !errors.As(err, &dup) || dup.ID != batch[2].ID {
		t.Fatalf("reordered retry = %v, want a duplicate of %s", err, batch[2].ID)
	}
	// Partial retry: a known id followed by a new one.
	fresh := event(t, "fresh")
	_, err = s.Append(ctx, "s", eventstore.Any, batch[2], fresh)
	if !errors.As(err, &dup) || dup.ID != fresh.ID {
		t.Fatalf("partial retry = %v, want a duplicate naming %s", err, fresh.ID)
	}
	// An id stored in another stream, first or later in the batch.
	_, err = s.Append(ctx, "other", eventstore.Any, batch[1])
	if !errors.As(err, &dup) || dup.ID != batch[1].ID || dup.Stream != "other" || !errors.Is(err, eventstore.ErrDuplicateEvent) {
		t.Fatalf("id of another stream = %v, want a duplicate of %s", err, batch[1].ID)
	}
	_, err = s.Append(ctx, "other", eventstore.Any, fresh, batch[1])
	if !errors.As(err, &dup) || dup.ID != batch[1].ID {
		t.Fatalf("id of another stream at index 1 = %v, want a duplicate of %s", err, batch[1].ID)
	}
	// A new id followed by one of this stream.
	_, err = s.Append(ctx, "s", eventstore.Any, fresh, batch[0])
	if !errors.As(err, &dup) || dup.ID != batch[0].ID {
		t.Fatalf("new id then a stored one = %v, want a duplicate of %s", err, batch[0].ID)
	}
	if n := streamLen(t, s, "s"); n != 5 {
		t.Fatalf("stream holds %d events after refused appends, want 5", n)
	}
	if _, err := s.ReadStream(ctx, "other", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("stream of refused appends: %v, want not found", err)
	}
}

// TestAppendOneEventRefused: a single event goes through
// append_event_packed, which reports refusals as a status in its bigint[]
// (no conflicting id in it); every refusal must still come back as the
// typed error or the original result, with nothing written.
func TestAppendOneEventRefused(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	first, second := event(t, "first"), event(t, "second")
	if _, err := s.Append(ctx, "a", eventstore.NoStream, first); err != nil {
		t.Fatal(err)
	}
	orig, err := s.Append(ctx, "a", eventstore.Exact(0), second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "b", eventstore.NoStream, event(t, "b0")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		event    eventstore.EventData
		want     eventstore.AppendResult
		check    func(error) bool
	}{
		{"retry with an expectation that no longer holds (status 1)", "a", eventstore.NoStream, second, orig, nil},
		{"wrong expected revision (status 2)", "a", eventstore.Exact(0), event(t, "late"), eventstore.AppendResult{},
			func(err error) bool {
				var wrong *eventstore.WrongExpectedRevisionError
				return errors.As(err, &wrong) && wrong.Actual == 1
			}},
		{"id stored in another stream, expectation refused (status 3)", "b", eventstore.Exact(7), first, eventstore.AppendResult{},
			func(err error) bool {
				var dup *eventstore.DuplicateEventError
				return errors.As(err, &dup) && dup.ID == first.ID && dup.Stream == "b"
			}},
		{"id stored in another stream, no stream yet", "c", eventstore.StreamExists, first, eventstore.AppendResult{},
			func(err error) bool {
				var dup *eventstore.DuplicateEventError
				return errors.As(err, &dup) && dup.ID == first.ID && dup.Stream == "c"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Append(ctx, tt.stream, tt.expected, tt.event)
			if tt.check == nil {
				if err != nil || res != tt.want {
					t.Fatalf("Append = %+v, %v; want %+v", res, err, tt.want)
				}
				return
			}
			if !tt.check(err) {
				t.Fatalf("Append = %+v, %v; not the error wanted", res, err)
			}
		})
	}
	if n := streamLen(t, s, "a"); n != 2 {
		t.Fatalf("stream a holds %d events, want 2", n)
	}
	if n := streamLen(t, s, "b"); n != 1 {
		t.Fatalf("stream b holds %d events, want 1", n)
	}
}

func TestAppendInvalid(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{MaxEventSize: 100})
	ctx := t.Context()
	tests := []struct {
		name   string
		stream string
		events []eventstore.EventData
		field  string
	}{
		{"empty stream", "", events(t, "x", 1), "stream"},
		{"reserved stream", "$all", events(t, "x", 1), "stream"},
		{"nil id", "s", []eventstore.EventData{{Type: "t"}}, "id"},
		{"bad json", "s", []eventstore.EventData{{ID: uuid.New(), Type: "t", Data: []byte(`{`)}}, "data"},
		{"too large", "s", []eventstore.EventData{{ID: uuid.New(), Type: "t", Data: []byte(`"` + strings.Repeat("x", 200) + `"`)}}, "data"},
	}
	for _, tt := range tests {
		_, err := s.Append(ctx, tt.stream, eventstore.Any, tt.events...)
		var inv *eventstore.InvalidEventError
		if !errors.As(err, &inv) || inv.Field != tt.field {
			t.Errorf("%s: %v, want an invalid %s", tt.name, err, tt.field)
		}
	}
}

// TestAdvisoryLockAssignsNoXid checks the claim the per-stream order rests
// on: taking the stream lock does not assign a transaction id, so the xid is
// assigned after the lock is held.
func TestAdvisoryLockAssignsNoXid(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	conn := connect(t, url)
	ctx := t.Context()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Error(err)
		}
	}()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('some-stream', 0))`); err != nil {
		t.Fatal(err)
	}
	var assigned bool
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned() IS NOT NULL`).Scan(&assigned); err != nil {
		t.Fatal(err)
	}
	if assigned {
		t.Fatal("pg_advisory_xact_lock assigned a transaction id")
	}
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id() IS NOT NULL AND pg_current_xact_id_if_assigned() IS NOT NULL`).Scan(&assigned); err != nil || !assigned {
		t.Fatalf("pg_current_xact_id did not assign an id: %v", err)
	}
}

// TestAppendRefusesToRunInsideATransaction: append_events must start with no
// xid and under READ COMMITTED, or per-stream order could break; it says so
// instead of writing.
func TestAppendRefusesToRunInsideATransaction(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	conn := connect(t, url)
	ctx := t.Context()
	args, err := newAppendArgs([]eventstore.PreparedEvent{{ID: uuid.New(), Type: "t", Version: 1, Data: []byte(`{}`), MetadataJSON: []byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		begin string
		first string
	}{
		{"xid already assigned", "BEGIN", "SELECT pg_current_xact_id()"},
		{"repeatable read", "BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT 1"},
	} {
		for _, stmt := range []string{tc.begin, tc.first} {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		var status int32
		err := conn.QueryRow(ctx, `SELECT out_status FROM `+quoteIdent(schema)+`.append_events($1, -1, $2, $3, $4, $5, $6)`,
			"s", args.ids, args.types, args.versions, args.data, args.metadata).Scan(&status)
		var packed []int64
		if err == nil {
			// The single-event function (migration 0003) checks the same.
			err = conn.QueryRow(ctx, `SELECT `+quoteIdent(schema)+`.append_event_packed($1, -1, $2, $3, $4, $5, $6)`,
				"s", args.ids[0], args.types[0], args.versions[0], args.data[0], args.metadata[0]).Scan(&packed)
		}
		if _, rbErr := conn.Exec(ctx, "ROLLBACK"); rbErr != nil {
			t.Fatal(rbErr)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if status != statusPrecondition {
			t.Errorf("%s: append_events status %d, want %d", tc.name, status, statusPrecondition)
		}
		if len(packed) != 3 || packed[0] != statusPrecondition {
			t.Errorf("%s: append_event_packed = %v, want status %d", tc.name, packed, statusPrecondition)
		}
	}
	if _, err := s.ReadStream(ctx, "s", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("ReadStream after refused appends: %v, want not found", err)
	}
}
