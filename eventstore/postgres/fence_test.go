package postgres

import (
	"context"
	"errors"
	neturl "net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// acquireLease takes lease name for holder through lease_acquire, after
// making it expire if someone holds it, and returns the new epoch.
func acquireLease(t *testing.T, conn *pgx.Conn, schema, name, holder string) int64 {
	t.Helper()
	q := quoteIdent(schema)
	if _, err := conn.Exec(t.Context(), `UPDATE `+q+`.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = $1`, name); err != nil {
		t.Fatal(err)
	}
	var ok bool
	var epoch int64
	if err := conn.QueryRow(t.Context(), `SELECT out_acquired, out_epoch FROM `+q+`.lease_acquire($1, $2, interval '1 hour')`, name, holder).Scan(&ok, &epoch); err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("%s did not get the expired lease %s", holder, name)
	}
	return epoch
}

// head is the stream's last revision (-1 when it has no events).
func head(t *testing.T, s *Store, stream string) int64 {
	t.Helper()
	evs, err := s.ReadStream(t.Context(), stream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return evs[0].Revision
}

// TestFencedAppends: an append fenced at the lease's current epoch is
// written; one fenced at an older epoch, or for a lease never taken, is
// refused with a *FencedError and writes nothing (one event, several,
// AppendMany); appends without a fence are not checked.
func TestFencedAppends(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	conn := connect(t, url)
	ctx := t.Context()

	first := acquireLease(t, conn, schema, "scheduler", "a")
	if first != 1 {
		t.Fatalf("first epoch = %d, want 1", first)
	}
	old := eventstore.WithFence(ctx, eventstore.Fence{Lease: "scheduler", Epoch: first})
	if _, err := s.Append(old, "s-1", eventstore.NoStream, event(t, "one")); err != nil {
		t.Fatalf("append at the current epoch: %v", err)
	}
	if _, err := s.Append(old, "s-1", eventstore.Exact(0), events(t, "two", 2)...); err != nil {
		t.Fatalf("append of two events at the current epoch: %v", err)
	}
	if _, err := s.AppendMany(old, eventstore.StreamAppend{Stream: "s-1", Expected: eventstore.Exact(2), Events: events(t, "many", 1)},
		eventstore.StreamAppend{Stream: "s-2", Expected: eventstore.NoStream, Events: events(t, "many", 2)}); err != nil {
		t.Fatalf("AppendMany at the current epoch: %v", err)
	}

	second := acquireLease(t, conn, schema, "scheduler", "b")
	if second != first+1 {
		t.Fatalf("epoch after a takeover = %d, want %d", second, first+1)
	}
	checkFenced := func(what string, err error, fence eventstore.Fence, current int64) {
		t.Helper()
		var fe *eventstore.FencedError
		if !errors.Is(err, eventstore.ErrFenced) || !errors.As(err, &fe) {
			t.Fatalf("%s: %v, want a *FencedError", what, err)
		}
		if fe.Fence != fence || fe.Current != current {
			t.Fatalf("%s: %+v, want fence %v at current epoch %d", what, fe, fence, current)
		}
	}
	headAll := func() uint64 {
		t.Helper()
		var pos uint64
		if err := s.pool.QueryRow(ctx, s.sql.head).Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	before := headAll()
	_, err := s.Append(old, "s-1", eventstore.Any, event(t, "late"))
	checkFenced("one event at the old epoch", err, eventstore.Fence{Lease: "scheduler", Epoch: first}, second)
	_, err = s.Append(old, "s-1", eventstore.Any, events(t, "late", 3)...)
	checkFenced("three events at the old epoch", err, eventstore.Fence{Lease: "scheduler", Epoch: first}, second)
	_, err = s.AppendMany(old, eventstore.StreamAppend{Stream: "s-1", Expected: eventstore.Any, Events: events(t, "late", 1)},
		eventstore.StreamAppend{Stream: "s-3", Expected: eventstore.Any, Events: events(t, "late", 2)})
	checkFenced("AppendMany at the old epoch", err, eventstore.Fence{Lease: "scheduler", Epoch: first}, second)
	never := eventstore.Fence{Lease: "never-taken", Epoch: 1}
	_, err = s.Append(eventstore.WithFence(ctx, never), "s-1", eventstore.Any, event(t, "nobody"))
	checkFenced("a lease never taken", err, never, 0)
	// The fence is checked before the expectation: a stale leader learns
	// it lost the lease, not that it raced someone.
	_, err = s.Append(old, "s-1", eventstore.NoStream, event(t, "late"))
	checkFenced("a wrong expectation at the old epoch", err, eventstore.Fence{Lease: "scheduler", Epoch: first}, second)
	if got := headAll(); got != before {
		t.Fatalf("the refused appends moved the log's head from %d to %d", before, got)
	}
	if h := head(t, s, "s-1"); h != 3 {
		t.Fatalf("s-1 is at revision %d after the refused appends, want 3", h)
	}
	if h := head(t, s, "s-3"); h != -1 {
		t.Fatalf("s-3 is at revision %d, want no events", h)
	}

	cur := eventstore.WithFence(ctx, eventstore.Fence{Lease: "scheduler", Epoch: second})
	if _, err := s.Append(cur, "s-1", eventstore.Exact(3), event(t, "new leader")); err != nil {
		t.Fatalf("append at the new epoch: %v", err)
	}
	if _, err := s.AppendMany(cur, eventstore.StreamAppend{Stream: "s-3", Expected: eventstore.NoStream, Events: events(t, "new", 2)}); err != nil {
		t.Fatalf("AppendMany at the new epoch: %v", err)
	}
	if _, err := s.Append(ctx, "s-1", eventstore.Exact(4), event(t, "unfenced")); err != nil {
		t.Fatalf("append without a fence: %v", err)
	}
	// A fenced retry of an append stored before is still the original
	// result (the ids are looked up after the fence passed).
	again := event(t, "again")
	res, err := s.Append(cur, "s-4", eventstore.NoStream, again)
	if err != nil {
		t.Fatal(err)
	}
	if res2, err := s.Append(cur, "s-4", eventstore.NoStream, again); err != nil || res2 != res {
		t.Fatalf("fenced retry = %+v, %v; want %+v", res2, err, res)
	}
}

// withApplication is url with the application name app.
func withApplication(t *testing.T, dsn, app string) string {
	t.Helper()
	u, err := neturl.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// waitingForLock awaits a backend of application name app waiting for an
// advisory lock.
func waitingForLock(t *testing.T, conn *pgx.Conn, app string) {
	t.Helper()
	await.Until(t, 30*time.Second, "a backend of "+app+" waits for an advisory lock", func() bool {
		var n int
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
			WHERE a.application_name = $1 AND l.locktype = 'advisory' AND NOT l.granted`, app).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}

// TestFenceOrdersAgainstTakeover: a fenced append that comes while a
// takeover is committing waits for it and is then refused; a takeover
// waits for the fenced appends in flight. Neither order lets an append
// at the old epoch commit after the new epoch exists.
func TestFenceOrdersAgainstTakeover(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	// Its own application name: other tests' appends may wait for locks too.
	s := openStoreAt(t, withApplication(t, url, "fenced-appender"), Options{Schema: schema})
	conn := connect(t, url)
	ctx := t.Context()
	q := quoteIdent(schema)
	epoch := acquireLease(t, conn, schema, "jobs", "a")
	fence := eventstore.Fence{Lease: "jobs", Epoch: epoch}

	// A takeover in progress: the lease's lock held, the epoch moved, not
	// committed yet.
	takeover, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := takeover.Exec(ctx, `SELECT pg_advisory_xact_lock(`+q+`.lease_lock_key('jobs'))`); err != nil {
		t.Fatal(err)
	}
	if _, err := takeover.Exec(ctx, `UPDATE `+q+`.leases SET epoch = epoch + 1, holder = 'b' WHERE name = 'jobs'`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(eventstore.WithFence(ctx, fence), "j-1", eventstore.Any, event(t, "late"))
		done <- err
	}()
	watch := connect(t, url)
	waitingForLock(t, watch, "fenced-appender")
	if err := takeover.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, eventstore.ErrFenced) {
		t.Fatalf("the append that waited for the takeover: %v, want ErrFenced", err)
	}
	if h := head(t, s, "j-1"); h != -1 {
		t.Fatalf("j-1 has revision %d, want nothing written", h)
	}

	// A fenced append in flight (its transaction holds the fence), and a
	// takeover of the expired lease: the takeover waits for its commit.
	epoch++
	inflight, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inflight.Rollback(context.Background())
	var seen int64
	if err := inflight.QueryRow(ctx, `SELECT `+q+`.lease_fence('jobs')`).Scan(&seen); err != nil || seen != epoch {
		t.Fatalf("lease_fence = %d, %v; want %d", seen, err, epoch)
	}
	if _, err := conn.Exec(ctx, `UPDATE `+q+`.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'jobs'`); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, withApplication(t, url, "taker"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	took := make(chan int64, 1)
	go func() {
		var e int64
		if err := other.QueryRow(ctx, `SELECT out_epoch FROM `+q+`.lease_acquire('jobs', 'c', interval '1 hour')`).Scan(&e); err != nil {
			t.Error(err)
		}
		took <- e
	}()
	waitingForLock(t, watch, "taker")
	if err := inflight.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if e := <-took; e != epoch+1 {
		t.Fatalf("the takeover's epoch = %d, want %d", e, epoch+1)
	}
}
