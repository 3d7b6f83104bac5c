package lease

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// storeSchema opens an event store on a fresh schema (its migrations
// create the leases table) and returns it with the server's URL.
func storeSchema(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	url, schema := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	st, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, url
}

func newPostgres(t *testing.T, url, schema, name, holder string, opts PostgresOptions) *Postgres {
	t.Helper()
	opts.Schema, opts.Holder = schema, holder
	if opts.TTL == 0 {
		opts.TTL, opts.RenewEvery, opts.Margin = 3*time.Second, 100*time.Millisecond, time.Second
	}
	l, err := NewPostgres(url, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func fenceOf(t *testing.T, held context.Context) eventstore.Fence {
	t.Helper()
	f, ok := eventstore.FenceFrom(held)
	if !ok {
		t.Fatal("the held context carries no fence")
	}
	return f
}

func stateOf(t *testing.T, st *postgres.Store, name string) State {
	t.Helper()
	all, err := List(t.Context(), st.Pool(), st.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("lease %s is not in the table (%+v)", name, all)
	return State{}
}

func TestPostgresOptionsValidate(t *testing.T) {
	t.Parallel()
	d := PostgresOptions{}.WithDefaults()
	if err := d.Validate(); err != nil || d.TTL != DefaultTTL || d.RenewEvery != DefaultTTL/3 || d.Margin != DefaultTTL/5 || d.Holder == "" {
		t.Fatalf("defaults %+v: %v", d, err)
	}
	bad := PostgresOptions{Schema: "a;b", TTL: time.Second, RenewEvery: 900 * time.Millisecond, Margin: 200 * time.Millisecond, Holder: "h"}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid options accepted")
	}
	for _, want := range []string{"schema", "renew every"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want a problem with %s", err, want)
		}
	}
}

// TestPostgresLeaseIsExclusive: one holder at a time; every takeover
// increments the epoch, which the held context's fence carries.
func TestPostgresLeaseIsExclusive(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	a := newPostgres(t, url, st.Schema(), "scheduler", "a", PostgresOptions{})
	b := newPostgres(t, url, st.Schema(), "scheduler", "b", PostgresOptions{})
	var epochA int64
	checkExclusive(t, &fenceRecorder{Lease: a, epoch: &epochA}, b, func(t *testing.T) bool {
		conn, try, err := b.tryAcquire(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		closeConn(conn)
		return try.ok
	})
	if epochA != 1 {
		t.Fatalf("first epoch %d, want 1", epochA)
	}
	// checkExclusive's b took it over (epoch 2) and released it.
	held, release, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if f := fenceOf(t, held); f != (eventstore.Fence{Lease: "scheduler", Epoch: 3}) {
		t.Fatalf("fence after two takeovers = %v, want scheduler@3", f)
	}
	if s := stateOf(t, st, "scheduler"); s.Holder != "a" || s.Epoch != 3 || !s.Live {
		t.Fatalf("state %+v, want a at epoch 3, live", s)
	}
	// Another name is another lease.
	_, releaseOther, err := newPostgres(t, url, st.Schema(), "audit", "b", PostgresOptions{}).Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	releaseOther()
}

// fenceRecorder records the epoch of the lease it wraps.
type fenceRecorder struct {
	Lease
	epoch *int64
}

func (r *fenceRecorder) Acquire(ctx context.Context) (context.Context, func(), error) {
	held, release, err := r.Lease.Acquire(ctx)
	if err == nil {
		f, _ := eventstore.FenceFrom(held)
		*r.epoch = f.Epoch
	}
	return held, release, err
}

// TestPostgresLeaseRenews: the holder keeps renewing (expires_at moves on)
// and a follower cannot take the lease meanwhile.
func TestPostgresLeaseRenews(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	a := newPostgres(t, url, st.Schema(), "jobs", "a", PostgresOptions{})
	held, release, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	first := stateOf(t, st, "jobs")
	renewals := 0
	last := first.RenewedAt
	await.Until(t, waitTimeout, "three renewals", func() bool {
		s := stateOf(t, st, "jobs")
		if s.RenewedAt.After(last) {
			renewals++
			last = s.RenewedAt
			if !s.ExpiresAt.After(first.ExpiresAt) || s.Epoch != first.Epoch || s.Holder != "a" {
				t.Fatalf("after a renewal: %+v, first %+v", s, first)
			}
		}
		return renewals >= 3
	})
	if held.Err() != nil {
		t.Fatalf("the holder lost a lease it renews: %v", context.Cause(held))
	}
	b := newPostgres(t, url, st.Schema(), "jobs", "b", PostgresOptions{})
	conn, try, err := b.tryAcquire(t.Context(), nil)
	closeConn(conn)
	if err != nil || try.ok || try.expiresIn <= 0 {
		t.Fatalf("a follower's try of a renewed lease: %+v, %v; want refused, expiring later", try, err)
	}
}

// TestPostgresLeaseTakenOver: once another holder took the lease (here
// after it was made to expire, in one transaction that holds the row, so
// that the old holder cannot renew in between), the old holder's next
// renewal finds it gone and steps down (cause ErrTaken), and its appends
// are fenced out while the new holder's pass.
func TestPostgresLeaseTakenOver(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newPostgres(t, url, st.Schema(), "limits", "a", PostgresOptions{Metrics: metrics})
	held, release, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release = sync.OnceFunc(release)
	defer release()
	if _, err := st.Append(held, "s-1", eventstore.NoStream, testEvent("by a")); err != nil {
		t.Fatalf("the holder's fenced append: %v", err)
	}
	q := pgx.Identifier{st.Schema()}.Sanitize()
	takeover, err := st.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer takeover.Rollback(context.Background())
	for _, sql := range []string{
		`SELECT 1 FROM ` + q + `.leases WHERE name = 'limits' FOR UPDATE`,
		`UPDATE ` + q + `.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'limits'`,
	} {
		if _, err := takeover.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	var took bool
	var epochB int64
	if err := takeover.QueryRow(t.Context(), `SELECT out_acquired, out_epoch FROM `+q+`.lease_acquire('limits', 'b', interval '1 hour')`).Scan(&took, &epochB); err != nil || !took {
		t.Fatalf("b's takeover: %v, %v", took, err)
	}
	if err := takeover.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if epochB != fenceOf(t, held).Epoch+1 {
		t.Fatalf("b's epoch %d after a's %d", epochB, fenceOf(t, held).Epoch)
	}
	if _, err := st.Append(held, "s-1", eventstore.Any, testEvent("late")); !errors.Is(err, eventstore.ErrFenced) {
		t.Fatalf("the deposed holder's append: %v, want ErrFenced", err)
	}
	select {
	case <-held.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the deposed holder did not step down")
	}
	if cause := context.Cause(held); !errors.Is(cause, ErrTaken) {
		t.Fatalf("cause %v, want ErrTaken", cause)
	}
	if got := testutil.ToFloat64(metrics.held.WithLabelValues("limits")); got != 0 {
		t.Fatalf("cairn_lease_held = %v after stepping down, want 0", got)
	}
	if got := testutil.ToFloat64(metrics.stepDown.WithLabelValues("limits", "taken")); got != 1 {
		t.Fatalf("cairn_lease_step_downs_total{reason=taken} = %v, want 1", got)
	}
	heldB := eventstore.WithFence(t.Context(), eventstore.Fence{Lease: "limits", Epoch: epochB})
	if _, err := st.Append(heldB, "s-1", eventstore.Exact(0), testEvent("by b")); err != nil {
		t.Fatalf("the new holder's append: %v", err)
	}
	release()
	if s := stateOf(t, st, "limits"); s.Holder != "b" || s.Epoch != epochB || !s.Live {
		t.Fatalf("state %+v: the old holder's release touched b's lease", s)
	}
}

// TestPostgresLeaseStepsDownWhenRenewalBlocked: a holder whose renewals
// cannot get through (here, blocked behind a lock on its row) gives the
// lease up by itself, before the lease's expiry in the database, and
// counts the failed renewals.
func TestPostgresLeaseStepsDownWhenRenewalBlocked(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The margin (two thirds of the TTL) leaves the test 4s to look at
	// the database's clock after the step-down.
	a := newPostgres(t, url, st.Schema(), "orphans", "a", PostgresOptions{Metrics: metrics,
		TTL: 6 * time.Second, RenewEvery: 300 * time.Millisecond, Margin: 4 * time.Second})
	held, release, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	blocker, err := st.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(context.Background())
	var expires time.Time
	if err := blocker.QueryRow(t.Context(), `SELECT expires_at FROM `+pgx.Identifier{st.Schema()}.Sanitize()+`.leases WHERE name = 'orphans' FOR UPDATE`).Scan(&expires); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
	case <-time.After(waitTimeout):
		t.Fatal("the holder did not step down while its renewals were blocked")
	}
	var before bool
	if err := st.Pool().QueryRow(t.Context(), `SELECT clock_timestamp() < $1`, expires).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if !before {
		t.Fatalf("the holder stepped down after its lease expired in the database (%s)", expires)
	}
	if cause := context.Cause(held); !errors.Is(cause, ErrExpired) {
		t.Fatalf("cause %v, want ErrExpired", cause)
	}
	if got := testutil.ToFloat64(metrics.failed.WithLabelValues("orphans")); got < 1 {
		t.Fatalf("cairn_lease_renewals_failed_total = %v, want at least 1", got)
	}
}

func testEvent(label string) eventstore.EventData {
	return eventstore.EventData{ID: eventstore.NewEventID(), Type: "test.happened", Data: []byte(`"` + label + `"`)}
}

// TestPostgresLeaseRetakenByItsHolder: a holder whose acquiring answer was
// lost (the lease is its own, live, but it does not know) takes it again
// at its next try, at a new epoch.
func TestPostgresLeaseRetakenByItsHolder(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	a := newPostgres(t, url, st.Schema(), "sequencer", "a", PostgresOptions{})
	for want := int64(1); want <= 2; want++ {
		conn, try, err := a.tryAcquire(t.Context(), nil)
		closeConn(conn)
		if err != nil || !try.ok || try.epoch != want {
			t.Fatalf("try %d: %+v, %v; want epoch %d", want, try, err, want)
		}
	}
	conn, try, err := newPostgres(t, url, st.Schema(), "sequencer", "b", PostgresOptions{}).tryAcquire(t.Context(), nil)
	closeConn(conn)
	if err != nil || try.ok || try.epoch != 2 {
		t.Fatalf("another holder's try: %+v, %v; want refused at epoch 2", try, err)
	}
}
