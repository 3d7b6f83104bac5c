package maintenance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

var superadmin = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}

const waitBound = 60 * time.Second

// rig is a Service over a backend with the tenancy read model kept live by
// a supervised projector. shadowGate, when set, holds every rebuild before
// it opens its shadow until the channel is closed.
type rig struct {
	b          *projectiontest.Backend
	h          *commands.Handlers
	svc        *maintenance.Service
	live       *projections.Projector
	shadowGate chan struct{}
	domains    atomic.Int64
}

func newRig(t testing.TB, b *projectiontest.Backend) *rig {
	t.Helper()
	r := &rig{b: b, h: projectiontest.Handlers(t, b), shadowGate: make(chan struct{})}
	svc, err := maintenance.New(maintenance.Config{
		Store: b.Store,
		DB:    b.DB,
		ReadModels: func(db *projections.DB, name string) (projections.Projection, error) {
			sel, err := readmodels.New(db, b.Store).Select([]string{name})
			if err != nil {
				return nil, err
			}
			return sel[0], nil
		},
		Shadow: func(ctx context.Context, name string) (*projections.DB, func() error, error) {
			select {
			case <-r.shadowGate:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return readmodels.OpenShadow(ctx, b.Store, b.DB, name)
		},
		System: maintenance.SystemConfig{Version: "test", StoreDSN: "postgres://cairn:s3cret@db.example:5432/cairn?sslmode=disable&password=s3cret"},
		Logger: projectiontest.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = svc
	p, err := projections.NewProjector(b.DB, b.Store, tenancy.New(b.DB), projections.Options{Logger: projectiontest.Discard, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	r.live = p
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	run := svc.Supervise(p)
	go func() { ran <- run(ctx) }()
	t.Cleanup(func() {
		svc.Close()
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("live projector: %v", err)
		}
	})
	return r
}

// addDomain creates a fresh domain and returns its position.
func (r *rig) addDomain(t testing.TB) uint64 {
	n := r.domains.Add(1)
	res, err := r.h.CreateDomain.Handle(context.Background(), projectiontest.MD, commands.CreateDomain{Actor: superadmin,
		Spec: domain.DomainSpec{Name: fmt.Sprintf("d%04d", n), Description: "domain"}})
	if err != nil {
		t.Error(err)
		return 0
	}
	return res.Position
}

func (r *rig) countDomains(ctx context.Context) (int64, error) {
	var n int64
	err := r.b.DB.QueryRow(ctx, r.b.DB.SQL(`SELECT count(*) FROM {schema}.domains`)).Scan(&n)
	return n, err
}

func (r *rig) await(t testing.TB, id string) maintenance.Rebuild {
	t.Helper()
	var job maintenance.Rebuild
	await.Until(t, waitBound, "the rebuild to end", func() bool {
		var err error
		if job, err = r.svc.GetRebuild(id); err != nil {
			t.Fatal(err)
		}
		return job.State != maintenance.StateRunning
	})
	return job
}

// An online rebuild replaces rows the live read model got wrong by the
// log's, while writers keep appending and readers keep reading: no read
// ever sees fewer domains than were there when it started (a read model
// being filled from zero would show them), and afterwards the live rows are
// exactly those a rebuild from scratch makes. A second rebuild of the same
// read model meanwhile is a conflict.
func TestOnlineRebuild(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		r := newRig(t, b)
		var last uint64
		for range 150 {
			last = r.addDomain(t)
		}
		if err := r.live.WaitFor(ctx, last); err != nil {
			t.Fatal(err)
		}
		// Damage the live rows: only a rebuild from the log repairs them.
		damage(t, b)
		before, err := r.countDomains(ctx)
		if err != nil || before != 150 {
			t.Fatalf("%d domains before the rebuild (%v), want 150", before, err)
		}

		job, err := r.svc.StartRebuild(tenancy.Name)
		if err != nil {
			t.Fatal(err)
		}
		if job.State != maintenance.StateRunning || job.ReadModel != tenancy.Name {
			t.Fatalf("started job %+v", job)
		}
		if _, err := r.svc.StartRebuild(tenancy.Name); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("a second rebuild of %s: %v, want a conflict", tenancy.Name, err)
		}
		if _, err := r.svc.StartRebuild("nope"); !errors.Is(err, domain.ErrInvalid) {
			t.Fatalf("a rebuild of an unknown read model: %v, want invalid", err)
		}

		stop := make(chan struct{})
		var wg sync.WaitGroup
		var reads, writes atomic.Int64
		wg.Add(2)
		go func() { // a writer
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r.addDomain(t)
				writes.Add(1)
			}
		}()
		go func() { // a reader
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := r.countDomains(ctx)
				if err != nil {
					t.Errorf("a read during the rebuild: %v", err)
					return
				}
				if n < before {
					t.Errorf("a read during the rebuild saw %d domains, fewer than the %d before it", n, before)
					return
				}
				reads.Add(1)
			}
		}()
		close(r.shadowGate)
		job = r.await(t, job.ID)
		close(stop)
		wg.Wait()
		if job.State != maintenance.StateDone {
			t.Fatalf("rebuild %+v", job)
		}
		if job.Events == 0 || job.Position < last || job.FinishedAt == nil {
			t.Errorf("finished job %+v: want events replayed and a position at or after %d", job, last)
		}
		if got := r.svc.Replaced(tenancy.Name); got <= job.Position {
			t.Errorf("Replaced(%s) = %d after a swap at %d: caches would keep answers read before it", tenancy.Name, got, job.Position)
		}
		if reads.Load() == 0 {
			t.Error("no read ran during the rebuild")
		}
		t.Logf("%s: %d reads and %d writes during the rebuild; job %+v", b.Name, reads.Load(), writes.Load(), job)

		last = r.addDomain(t)
		if err := r.live.WaitFor(ctx, last); err != nil {
			t.Fatal(err)
		}
		got := dumpTenancy(t, b.DB)
		if n, _ := r.countDomains(ctx); n != r.domains.Load() {
			t.Errorf("%d domains after the rebuild, want %d", n, r.domains.Load())
		}
		// The reference: a rebuild from scratch of a fresh copy.
		ref, drop, err := readmodels.OpenShadow(ctx, b.Store, b.DB, "reference")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { drop() })
		rp, err := projections.NewProjector(ref, b.Store, tenancy.New(ref), projections.Options{Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(dumpTenancy(t, ref), got); diff != "" {
			t.Fatalf("the live rows after the rebuild differ from a rebuild's:\n%s", diff)
		}

		// The next rebuild of the same read model may start.
		again, err := r.svc.StartRebuild(tenancy.Name)
		if err != nil {
			t.Fatal(err)
		}
		if job := r.await(t, again.ID); job.State != maintenance.StateDone {
			t.Fatalf("second rebuild %+v", job)
		}
	})
}

// damage rewrites every domain's description, as a bug would.
func damage(t *testing.T, b *projectiontest.Backend) {
	t.Helper()
	ctx := context.Background()
	stmt := b.DB.SQL(`UPDATE {schema}.domains SET description = 'damaged'`)
	switch st := b.Store.(type) {
	case *sqlite.Store:
		raw, err := st.OpenRaw(sqlite.Options{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		unlock, err := st.LockWrites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("damage: %v", err)
		}
	case *postgres.Store:
		if _, err := st.Pool().Exec(ctx, stmt); err != nil {
			t.Fatalf("damage: %v", err)
		}
	default:
		t.Fatalf("no way to damage a %T", st)
	}
}

// dumpTenancy dumps the domains table, every column.
func dumpTenancy(t *testing.T, db *projections.DB) []string {
	return projectiontest.Dump(t, db, "domains", 8, "name")
}

func TestUnknownJobsAreNotFound(t *testing.T) {
	r := newRig(t, projectiontest.SQLite(t))
	for _, id := range []string{"nope", "0190b5c2-0000-7000-8000-000000000000"} {
		if _, err := r.svc.GetRebuild(id); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("GetRebuild(%q): %v, want not found", id, err)
		}
		if _, err := r.svc.GetVerification(id); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("GetVerification(%q): %v, want not found", id, err)
		}
	}
}

// BenchmarkOnlineRebuild rebuilds the tenancy read model of a log of
// CAIRN_BENCH_DOMAINS domains (default 2000) online, on SQLite, and
// reports the replay's rate and how long the live projector was held.
func BenchmarkOnlineRebuild(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_DOMAINS")); err == nil && v > 0 {
		n = v
	}
	be := projectiontest.SQLite(b)
	r := newRig(b, be)
	close(r.shadowGate)
	var last uint64
	for range n {
		last = r.addDomain(b)
	}
	if err := r.live.WaitFor(context.Background(), last); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var rate, held float64
	for range b.N {
		job, err := r.svc.StartRebuild(tenancy.Name)
		if err != nil {
			b.Fatal(err)
		}
		job = r.await(b, job.ID)
		if job.State != maintenance.StateDone {
			b.Fatalf("rebuild %+v", job)
		}
		rate, held = job.EventsPerSecond, job.HeldSeconds
	}
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(held*1000, "held-ms")
}
