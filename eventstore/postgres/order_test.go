package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// collect n events from a subscription started at after, failing after
// timeout.
func subscribeN(t *testing.T, s *Store, after uint64, n int, timeout time.Duration) []eventstore.RecordedEvent {
	t.Helper()
	sub, err := s.Subscribe(t.Context(), after)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	got := make([]eventstore.RecordedEvent, 0, n)
	for len(got) < n {
		got = append(got, receive(t, sub, timeout))
	}
	return got
}

// TestConcurrentWritersNeverSkip runs 16 writers appending batches to a few
// shared streams (so appends to one stream race each other) while a
// subscription follows from the start: it must deliver every event exactly
// once, in strictly increasing positions, with each stream's revisions in
// order. Several subscriptions follow at once, sharing the Store's tail.
func TestConcurrentWritersNeverSkip(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	const (
		writers     = 16
		appends     = 250 // per writer
		streams     = 12
		maxBatch    = 4
		subscribers = 6
		totalWait   = 60 * time.Second
	)
	ctx := t.Context()

	// Plan every writer's batches up front, so the total is known.
	plan := make([][]int, writers) // batch sizes
	total := 0
	for w := range plan {
		r := rand.New(rand.NewPCG(uint64(w), 42))
		for range appends {
			n := 1 + r.IntN(maxBatch)
			plan[w] = append(plan[w], n)
			total += n
		}
	}

	// Several subscriptions follow at once: they share the Store's tail
	// of $all (recent), and each must still see every event once.
	subs := make([]eventstore.Subscription, subscribers)
	received := make([]chan []eventstore.RecordedEvent, subscribers)
	for k := range subs {
		sub, err := s.Subscribe(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		subs[k], received[k] = sub, make(chan []eventstore.RecordedEvent, 1)
		go func() {
			var got []eventstore.RecordedEvent
			timeout := time.NewTimer(totalWait)
			defer timeout.Stop()
			for len(got) < total {
				select {
				case msg, ok := <-sub.Messages():
					if !ok {
						received[k] <- got
						return
					}
					if !msg.CaughtUp {
						got = append(got, msg.Event)
					}
				case <-timeout.C:
					received[k] <- got
					return
				}
			}
			received[k] <- got
		}()
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for k, n := range plan[w] {
				stream := fmt.Sprintf("stream-%d", r.IntN(streams))
				evs := make([]eventstore.EventData, n)
				for i := range evs {
					evs[i] = event(t, fmt.Sprintf("w%d-a%d-e%d", w, k, i))
				}
				if _, err := s.Append(ctx, stream, eventstore.Any, evs...); err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", w, k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var got []eventstore.RecordedEvent
	for k := range subs {
		got = <-received[k]
		checkDelivery(t, got, total)
		if err := subs[k].Err(); err != nil {
			t.Fatalf("subscription %d: %v", k, err)
		}
	}
	// Nothing more: a second subscription from the last position is caught
	// up at once.
	sub2, err := s.Subscribe(ctx, got[len(got)-1].Position)
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Close()
	if extra := waitCaughtUp(t, sub2, 30*time.Second); len(extra) != 0 {
		t.Fatalf("%d events after the last one delivered", len(extra))
	}
}

// checkDelivery fails unless got is total events, each once, in strictly
// increasing positions, each stream's revisions in order.
func checkDelivery(t *testing.T, got []eventstore.RecordedEvent, total int) {
	t.Helper()
	if len(got) != total {
		t.Fatalf("subscription delivered %d events, want %d", len(got), total)
	}
	seen := make(map[string]bool, total)
	nextRevision := make(map[string]int64)
	for i, ev := range got {
		if i > 0 && ev.Position <= got[i-1].Position {
			t.Fatalf("event %d: position %d after %d", i, ev.Position, got[i-1].Position)
		}
		l := labelOf(t, ev)
		if seen[l] {
			t.Fatalf("event %s delivered twice", l)
		}
		seen[l] = true
		if ev.Revision != nextRevision[ev.Stream] {
			t.Fatalf("event %d: %s revision %d, want %d: $all shows a stream out of order", i, ev.Stream, ev.Revision, nextRevision[ev.Stream])
		}
		nextRevision[ev.Stream]++
	}
}

// TestSameStreamXidOrder builds the race per-stream order depends on: an
// append to a stream waits for the stream's lock while an append to another
// stream commits. The waiting append must get its xid only once it holds the
// lock, so it is ordered after both, and the horizon must hide the committed
// append to the other stream while the first holder is still open.
func TestSameStreamXidOrder(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	ctx := t.Context()
	holder := connect(t, url)
	observer := connect(t, url)

	first := event(t, "first")
	args, err := newAppendArgs(mustPrepare(t, "hot", first))
	if err != nil {
		t.Fatal(err)
	}
	// The first append runs inside an open transaction, so it holds the
	// stream lock and its xid until we commit.
	if _, err := holder.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var status int32
	if err := holder.QueryRow(ctx, `SELECT out_status FROM `+quoteIdent(schema)+`.append_events($1, -2, $2, $3, $4, $5, $6)`,
		"hot", args.ids, args.types, args.versions, args.data, args.metadata).Scan(&status); err != nil || status != statusAppended {
		t.Fatalf("first append: status %d, %v", status, err)
	}

	type result struct {
		res eventstore.AppendResult
		err error
	}
	second := make(chan result, 1)
	go func() {
		res, err := s.Append(ctx, "hot", eventstore.Exact(0), event(t, "second"))
		second <- result{res, err}
	}()

	// Wait until the second append waits for the stream lock, and check it
	// has no xid while it waits.
	await.Until(t, 30*time.Second, "the second append to wait for the stream lock", func() bool {
		var waiting int
		var withXid int
		err := observer.QueryRow(ctx, `SELECT count(*), count(backend_xid) FROM pg_stat_activity
 WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%' || $1 || '%append_event%'`, quoteIdent(schema)).Scan(&waiting, &withXid)
		if err != nil {
			t.Fatal(err)
		}
		if waiting == 1 && withXid != 0 {
			t.Fatal("the append waiting for the stream lock already has an xid")
		}
		return waiting == 1
	})

	other, err := s.Append(ctx, "cold", eventstore.NoStream, event(t, "other"))
	if err != nil {
		t.Fatal(err)
	}
	// "other" has committed, but the first append's transaction is open
	// with a smaller xid: the horizon must hide "other".
	if evs, err := s.ReadAll(ctx, 0, 100); err != nil || len(evs) != 0 {
		t.Fatalf("ReadAll while an older transaction is open = %d events, %v; want none", len(evs), err)
	}

	if _, err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	r := <-second
	if r.err != nil {
		t.Fatalf("second append: %v", r.err)
	}
	if r.res.Revision != 1 {
		t.Fatalf("second append revision %d, want 1", r.res.Revision)
	}
	if r.res.Position <= other.Position {
		t.Fatalf("second append position %d <= %d of the append that committed while it waited: its xid was assigned before the lock", r.res.Position, other.Position)
	}

	got := subscribeN(t, s, 0, 3, 30*time.Second)
	want := []string{"first", "other", "second"}
	for i, ev := range got {
		if l := labelOf(t, ev); l != want[i] {
			t.Fatalf("$all[%d] = %s, want %s", i, l, want[i])
		}
	}
}

// TestHorizonWaitsForForeignTransactions: any transaction holding an xid
// delays what ReadAll shows (never loses it).
func TestHorizonWaitsForForeignTransactions(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	ctx := t.Context()
	conn := connect(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "a", eventstore.Any, events(t, "a", 2)...); err != nil {
		t.Fatal(err)
	}
	if evs, err := s.ReadAll(ctx, 0, 10); err != nil || len(evs) != 0 {
		t.Fatalf("ReadAll behind an open transaction = %d events, %v; want none", len(evs), err)
	}
	// The stream itself is readable at once (read-your-writes).
	if evs, err := s.ReadStream(ctx, "a", eventstore.ReadStreamOptions{}); err != nil || len(evs) != 2 {
		t.Fatalf("ReadStream = %d events, %v; want 2", len(evs), err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := subscribeN(t, s, 0, 2, 30*time.Second); labelOf(t, got[1]) != "a-1" {
		t.Fatalf("got %s, want a-1", labelOf(t, got[1]))
	}
}

func mustPrepare(t *testing.T, stream string, evs ...eventstore.EventData) []eventstore.PreparedEvent {
	t.Helper()
	p, err := eventstore.Prepare(stream, evs, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAppendRetriesAfterDeadlock: two appends storing the same two ids in
// opposite orders in different streams deadlock; the store retries the one
// PostgreSQL aborted, and it succeeds once the other transaction is gone.
func TestAppendRetriesAfterDeadlock(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	ctx := t.Context()
	holder := connect(t, url)
	observer := connect(t, url)
	x, y := event(t, "x"), event(t, "y")

	// The holder stores x in s1 and keeps its transaction open.
	args, err := newAppendArgs(mustPrepare(t, "s1", x))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var status int32
	if err := holder.QueryRow(ctx, `SELECT out_status FROM `+quoteIdent(schema)+`.append_events($1, -1, $2, $3, $4, $5, $6)`,
		"s1", args.ids, args.types, args.versions, args.data, args.metadata).Scan(&status); err != nil || status != statusAppended {
		t.Fatalf("holder append: status %d, %v", status, err)
	}

	// The store appends y then x to s2: it stores y and waits for the
	// holder's x.
	type result struct {
		res eventstore.AppendResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Append(ctx, "s2", eventstore.Any, y, x)
		done <- result{res, err}
	}()
	waitForLockWait(t, observer, schema, "transactionid")

	// The holder now stores y too: a deadlock. PostgreSQL aborts one side
	// (the store's, which waited first and so detects it); the holder then
	// rolls back, and the store's append, retried, must succeed.
	yArgs, err := newAppendArgs(mustPrepare(t, "s1", y))
	if err != nil {
		t.Fatal(err)
	}
	_, holderErr := holder.Exec(ctx, `INSERT INTO `+quoteIdent(schema)+`.events (position, tx_id, revision, recorded_at, id, version, stream, type, data, metadata)
VALUES (pg_current_xact_id()::text::bigint * 1048576 + 1, pg_current_xact_id(), 1, now(), $1, 1, 's1', 't', '{}', '{}')`, yArgs.ids[0])
	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("append after the deadlock (holder's insert: %v): %v", holderErr, r.err)
	}
	got, err := s.ReadStream(ctx, "s2", eventstore.ReadStreamOptions{})
	if err != nil || len(got) != 2 || got[0].ID != y.ID || got[1].ID != x.ID {
		t.Fatalf("s2 = %d events, %v; want y, x", len(got), err)
	}
}

// waitForLockWait waits until a backend running append_events of schema
// waits for a lock of the given type.
func waitForLockWait(t *testing.T, observer *pgx.Conn, schema, lockType string) {
	t.Helper()
	await.Until(t, 30*time.Second, "an append_events to wait for a "+lockType+" lock", func() bool {
		var waiting int
		err := observer.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
 WHERE wait_event_type = 'Lock' AND wait_event = $2 AND query LIKE '%' || $1 || '%append_event%'`, quoteIdent(schema), lockType).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting > 0
	})
}

// TestAppendCancelledWhileWaitingForTheStream: an append whose context ends
// while it waits for the stream lock returns the context's error and writes
// nothing.
func TestAppendCancelledWhileWaitingForTheStream(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	holder := connect(t, url)
	ctx := t.Context()
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('busy', 0))`); err != nil {
		t.Fatal(err)
	}
	// Cancel the append once the server shows it waiting for the lock,
	// not after a fixed time: an append that did not wait would have
	// returned by then, and one that waits is surely cancelled while it does.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	appended := make(chan error, 1)
	go func() {
		_, err := s.Append(actx, "busy", eventstore.Any, event(t, "late"))
		appended <- err
	}()
	observer := connect(t, url)
	waitForLockWait(t, observer, schema, "advisory")
	cancel()
	if err := <-appended; !errors.Is(err, context.Canceled) {
		t.Fatalf("Append = %v, want the context's cancellation", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadStream(ctx, "busy", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("ReadStream after the cancelled append: %v, want not found", err)
	}
	// The store is still usable.
	if _, err := s.Append(ctx, "busy", eventstore.NoStream, event(t, "now")); err != nil {
		t.Fatal(err)
	}
}
