package appproxy_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// countedLookup counts the queries that reach the read model.
type countedLookup struct {
	rm *sessions.ReadModel
	n  atomic.Int64
}

func (c *countedLookup) GetSession(ctx context.Context, id uuid.UUID) (sessions.Session, error) {
	c.n.Add(1)
	return c.rm.GetSession(ctx, id)
}

// A cached route costs no query while the read model stays the same, and
// dies with its session: the request right after the read model shows the
// session ending gets 404, on either store.
func TestCachedRouteDiesWithItsSession(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		rm := sessions.New(b.DB)
		if err := projections.Setup(ctx, b.DB, rm); err != nil {
			t.Fatal(err)
		}
		run := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		h := projectiontest.Handlers(t, b)

		if _, err := h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 8)}); err != nil {
			t.Fatal(err)
		}
		spec := projectiontest.SessionSpec("alice", "", 1)
		res, err := h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		id, kernel := res.SessionID, res.KernelIDs[0]
		placed := []domain.KernelPlacement{{KernelID: kernel, AgentID: "node-1"}}
		if _, err := h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{SessionID: id, Kernels: placed}); err != nil {
			t.Fatal(err)
		}
		report := func(r commands.ReportKernelStatus) uint64 {
			t.Helper()
			r.SessionID, r.KernelID, r.AgentID = id, kernel, "node-1"
			out, err := h.ReportKernelStatus.Handle(ctx, projectiontest.MD, r)
			if err != nil {
				t.Fatal(err)
			}
			return out.Position
		}
		report(commands.ReportKernelStatus{Phase: domain.PhasePreparing})
		run.WaitFor(t, report(commands.ReportKernelStatus{Phase: domain.PhaseRunning, ContainerID: "c1",
			ServicePorts: []domain.PublishedPort{{Name: "web", Protocol: "http", ContainerPort: 8080, HostPort: 30000}}}))

		lookup := &countedLookup{rm: rm}
		routes := appproxy.NewCachedRoutes(appproxy.SessionRoutes{Sessions: lookup}, b.DB)
		want := appproxy.Route{KernelID: kernel, AgentID: "node-1", Port: 8080, HostPort: 30000}
		for range 5 {
			got, err := routes.Route(ctx, id, "web")
			if err != nil || got != want {
				t.Fatalf("Route = %+v, %v; want %+v", got, err, want)
			}
		}
		if n := lookup.n.Load(); n != 1 {
			t.Fatalf("5 lookups of an unchanged route queried the read model %d times, want 1", n)
		}
		if _, err := routes.Route(ctx, id, "other"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("an app the session does not offer: %v, want not found", err)
		}

		out, err := h.TerminateSession.Handle(ctx, projectiontest.MD, commands.TerminateSession{SessionID: id, Reason: "user-requested"})
		if err != nil {
			t.Fatal(err)
		}
		run.WaitFor(t, out.Position)
		if _, err := routes.Route(ctx, id, "web"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("the route right after the session's end: %v, want not found", err)
		}
	})
}

// version is a Versioned a test moves by hand.
type version struct {
	v       atomic.Uint64
	writing atomic.Bool
}

func (s *version) Version() (uint64, bool) { return s.v.Load(), !s.writing.Load() }

// counted is a Routes that counts its lookups.
type counted struct {
	n     atomic.Int64
	route appproxy.Route
}

func (c *counted) Route(context.Context, uuid.UUID, string) (appproxy.Route, error) {
	c.n.Add(1)
	return c.route, nil
}

// A route read while a write is under way is not kept, and a new version
// drops what was kept.
func TestCachedRoutesFollowTheVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := &version{}
	inner := &counted{route: appproxy.Route{AgentID: "a1", Port: 80}}
	routes := appproxy.NewCachedRoutes(inner, src)
	session := uuid.New()
	lookups := func(want int64) {
		t.Helper()
		if _, err := routes.Route(ctx, session, "web"); err != nil {
			t.Fatal(err)
		}
		if n := inner.n.Load(); n != want {
			t.Fatalf("%d lookups reached the read model, want %d", n, want)
		}
	}
	src.writing.Store(true)
	lookups(1)
	lookups(2) // not kept while writing
	src.writing.Store(false)
	src.v.Add(1)
	lookups(3)
	lookups(3) // kept
	src.v.Add(1)
	lookups(4) // a write began: read again
	lookups(4)
}
