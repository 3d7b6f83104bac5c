package sqlite

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/cairnhq/cairn/eventstore"
)

// request builds an append request as Append does, without queueing it.
func request(t *testing.T, ctx context.Context, stream string, expected eventstore.ExpectedRevision, evs ...eventstore.EventData) *appendRequest {
	t.Helper()
	prepared, err := eventstore.Prepare(stream, evs, 0)
	if err != nil {
		t.Fatal(err)
	}
	part, err := newAppendPart(stream, expected, prepared, true)
	if err != nil {
		t.Fatal(err)
	}
	return newAppendRequest(ctx, []appendPart{part})
}

func outcome(t *testing.T, req *appendRequest) appendOutcome {
	t.Helper()
	select {
	case out := <-req.reply:
		return out
	default:
		t.Fatalf("no outcome for the append to %s", req.parts[0].stream)
		return appendOutcome{}
	}
}

// TestBatchIsolation drives one batch through the writer directly (the
// writer goroutine is idle: nothing else appends to this store), so the
// grouping is known: each append is checked against the effects of the
// appends before it in the same transaction, and a refused one writes
// nothing while the others commit.
func TestBatchIsolation(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	e1, e2, e3, e4, e5, e6 := event("x", 1), event("x", 2), event("x", 3), event("x", 4), event("x", 5), event("x", 6)

	batch := []*appendRequest{
		request(t, ctx, "a", eventstore.NoStream, e1),         // 0: ok
		request(t, ctx, "a", eventstore.Exact(0), e2),         // 1: ok, sees 0
		request(t, ctx, "a", eventstore.Exact(0), e3),         // 2: wrong revision, actual 1
		request(t, ctx, "b", eventstore.NoStream, e4, e1),     // 3: e1 is in stream a: duplicate, e4 undone
		request(t, ctx, "b", eventstore.NoStream, e5, e6),     // 4: ok, b still empty
		request(t, ctx, "a", eventstore.NoStream, e1, e2),     // 5: retry of 0+1 within the batch
		request(t, ctx, "c", eventstore.Any),                  // 6: empty append
		request(t, ctx, "b", eventstore.StreamExists, e4),     // 7: ok, sees 4 (e4 was undone in 3)
		request(t, ctx, "c", eventstore.StreamExists, e3),     // 8: wrong revision, actual -1
		request(t, ctx, "a", eventstore.Exact(1), e3, e2, e6), // 9: e2 stored at a/1, e6 at b/1: duplicate e2
	}
	s.writer.process(batch)
	if got := s.writer.batches.Load(); got != 1 {
		t.Fatalf("%d transactions, want 1", got)
	}

	ok := func(i int, rev int64, pos uint64) {
		t.Helper()
		out := outcome(t, batch[i])
		if out.err != nil || out.result() != (eventstore.AppendResult{Revision: rev, Position: pos}) {
			t.Errorf("append %d = %+v, %v; want revision %d position %d", i, out.result(), out.err, rev, pos)
		}
	}
	wrong := func(i int, actual int64) {
		t.Helper()
		out := outcome(t, batch[i])
		if w := asError[*eventstore.WrongExpectedRevisionError](t, out.err); w.Actual != actual {
			t.Errorf("append %d: actual %d, want %d", i, w.Actual, actual)
		}
	}
	dup := func(i int, id eventstore.EventData) {
		t.Helper()
		out := outcome(t, batch[i])
		if d := asError[*eventstore.DuplicateEventError](t, out.err); d.ID != id.ID {
			t.Errorf("append %d: duplicate %s, want %s", i, d.ID, id.ID)
		}
	}
	ok(0, 0, 1)
	ok(1, 1, 2)
	wrong(2, 1)
	dup(3, e1)
	ok(4, 1, 4)
	ok(5, 1, 2)
	ok(6, -1, 0)
	ok(7, 2, 5)
	wrong(8, -1)
	dup(9, e2)

	all := readAllEvents(t, s)
	want := []struct {
		id     eventstore.EventData
		stream string
		rev    int64
	}{{e1, "a", 0}, {e2, "a", 1}, {e5, "b", 0}, {e6, "b", 1}, {e4, "b", 2}}
	if len(all) != len(want) {
		t.Fatalf("%d events stored, want %d", len(all), len(want))
	}
	for i, w := range want {
		if ev := all[i]; ev.ID != w.id.ID || ev.Stream != w.stream || ev.Revision != w.rev || ev.Position != uint64(i+1) {
			t.Errorf("event %d = %s %s/%d @%d, want %s %s/%d @%d", i, ev.ID, ev.Stream, ev.Revision, ev.Position, w.id.ID, w.stream, w.rev, i+1)
		}
	}
}

// TestFailedBatchRetriesAppendsAlone: an append that breaks the whole
// transaction (here a NOT NULL violation, which only a request that skipped
// Prepare can cause) fails alone; the rest of its batch commits.
func TestFailedBatchRetriesAppendsAlone(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	broken := request(t, ctx, "broken", eventstore.Any, event("x", 0))
	broken.parts[0].events[0].Data = nil
	batch := []*appendRequest{
		request(t, ctx, "a", eventstore.NoStream, event("x", 1)),
		broken,
		request(t, ctx, "b", eventstore.NoStream, event("x", 2), event("x", 3)),
	}
	s.writer.process(batch)

	if out := outcome(t, batch[0]); out.err != nil || out.result().Position != 1 {
		t.Errorf("append 0 = %+v, %v", out.result(), out.err)
	}
	if out := outcome(t, batch[1]); out.err == nil {
		t.Errorf("broken append succeeded: %+v", out.result())
	} else if _, ok := sqliteCode(out.err); !ok {
		t.Errorf("broken append: %v, want the driver error in the chain", out.err)
	}
	if out := outcome(t, batch[2]); out.err != nil || out.result() != (eventstore.AppendResult{Revision: 1, Position: 3}) {
		t.Errorf("append 2 = %+v, %v", out.result(), out.err)
	}
	if n := len(readAllEvents(t, s)); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
	// The writer is still healthy.
	mustAppend(t, s, "a", eventstore.Exact(0), event("x", 4))
}

// TestRollbackFailureReopensConnection: when the transaction state is
// unknown the writer replaces its connection and keeps working.
func TestRollbackFailureReopensConnection(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	mustAppend(t, s, "a", eventstore.NoStream, event("x", 0))
	// No transaction is open: ROLLBACK fails, as after SQLite rolled back
	// on its own.
	w := s.writer
	cause := errors.New("cause")
	if err := w.abort(context.Background(), cause); err != cause {
		t.Fatalf("abort = %v, want the cause alone", err)
	}
	mustAppend(t, s, "a", eventstore.Exact(0), event("x", 1))
	if n := len(readAllEvents(t, s)); n != 2 {
		t.Fatalf("%d events stored, want 2", n)
	}
}

func TestCancelledBeforeTheWriterTakesIt(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req := request(t, ctx, "a", eventstore.Any, event("x", 0))
	cancel()
	if out := req.wait(); !errors.Is(out.err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", out.err)
	}
	s.writer.process([]*appendRequest{req}) // the writer reaches it later
	if n := len(readAllEvents(t, s)); n != 0 {
		t.Fatalf("an abandoned append was written")
	}
	select {
	case out := <-req.reply:
		t.Fatalf("the writer answered an abandoned request: %+v", out)
	default:
	}
}

func TestCancelledWhenTheWriterTakesIt(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req := request(t, ctx, "a", eventstore.Any, event("x", 0))
	cancel()
	s.writer.process([]*appendRequest{req}) // takes it first, sees ctx done
	if out := req.wait(); !errors.Is(out.err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", out.err)
	}
	if n := len(readAllEvents(t, s)); n != 0 {
		t.Fatalf("a cancelled append was written")
	}
}

func TestCancelledAfterTheWriterTookItReportsTheOutcome(t *testing.T) {
	t.Parallel()
	// In a synctest bubble: synctest.Wait returns once the waiting
	// goroutine is blocked for good, so a wait that returned early on the
	// cancellation has delivered by then.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		req := request(t, ctx, "a", eventstore.Any, event("x", 0))
		if !req.take() {
			t.Fatal("take refused a live request")
		}
		cancel()
		result := make(chan appendOutcome, 1)
		go func() {
			result <- req.wait()
		}()
		synctest.Wait()
		select {
		case out := <-result:
			t.Fatalf("wait returned %+v before the outcome", out)
		default:
		}
		want := eventstore.AppendResult{Revision: 0, Position: 1}
		req.reply <- appendOutcome{results: []eventstore.AppendResult{want}}
		if out := <-result; out.err != nil || out.result() != want {
			t.Fatalf("wait = %+v, %v; want the committed result", out.result(), out.err)
		}
	})
}

// TestFailedCommitFailsTheWholeBatch: a COMMIT that fails (here a deferred
// foreign key violation, set up by a trigger for the stream "poison")
// fails every append of the batch, writes nothing, and leaves the writer
// healthy.
func TestFailedCommitFailsTheWholeBatch(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := context.Background()
	// The writer is idle: the test may use its connection.
	for _, stmt := range []string{
		`PRAGMA foreign_keys = ON`,
		`CREATE TABLE test_parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE test_child (parent INTEGER REFERENCES test_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TRIGGER test_poison AFTER INSERT ON events WHEN NEW.stream = 'poison'
			BEGIN INSERT INTO test_child VALUES (42); END`,
	} {
		if _, err := s.writer.conn.conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	batch := []*appendRequest{
		request(t, ctx, "a", eventstore.NoStream, event("x", 1)),
		request(t, ctx, "poison", eventstore.NoStream, event("x", 2)),
		request(t, ctx, "b", eventstore.NoStream, event("x", 3)),
	}
	s.writer.process(batch)
	for i, req := range batch {
		out := outcome(t, req)
		if code, ok := sqliteCode(out.err); !ok || code&0xff != sqlite3.SQLITE_CONSTRAINT {
			t.Errorf("append %d: %+v, %v; want the failed COMMIT's constraint error", i, out.result(), out.err)
		}
	}
	if n := len(readAllEvents(t, s)); n != 0 {
		t.Fatalf("%d events visible after a failed commit", n)
	}
	if res := mustAppend(t, s, "a", eventstore.NoStream, event("x", 4)); res.Position != 1 {
		t.Fatalf("append after the failed commit = %+v, want position 1", res)
	}
}
