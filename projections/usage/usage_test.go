package usage_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/usage"
)

var ctx = context.Background()

var superadmin = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}

// clock is the commands' clock, set by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func at(day string, hour, minute int) time.Time {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
}

type env struct {
	t     *testing.T
	b     *projectiontest.Backend
	h     *commands.Handlers
	clock *clock
	rm    *usage.ReadModel
	r     *projectiontest.Running
	last  uint64
	alice uuid.UUID
}

func newEnv(t *testing.T, b *projectiontest.Backend, opts projections.Options) *env {
	t.Helper()
	c := &clock{t: at("2025-03-01", 8, 0)}
	h, err := commands.NewHandlers(b.Store, c.Now, commands.Options{PasswordHasher: password.Hasher{Params: password.CheapParams()}})
	if err != nil {
		t.Fatal(err)
	}
	rm := usage.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, b: b, h: h, clock: c, rm: rm, r: projectiontest.Start(t, b.DB, b, rm, opts)}
}

// step records a command's position, failing the test on its error.
func (e *env) step(r commands.Result, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	e.last = max(e.last, r.Position)
}

// session requests a one-kernel session of owner in domain/project with
// 1 CPU, 1 GiB and the accelerator slot given ("" for none), and
// schedules it on node-1's device at the clock's time.
func (e *env) session(t *testing.T, owner, dom, project string, accel domain.SlotName, amount, device string) commands.RequestSessionResult {
	t.Helper()
	spec := projectiontest.SessionSpec(owner, "", 1)
	spec.Domain, spec.Project = dom, project
	if accel != "" {
		spec.Resources[accel] = projectiontest.Qty(amount)
	}
	res, err := e.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: spec})
	e.step(commands.Result{Position: res.Position}, err)
	e.step(e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
		SessionID: res.SessionID, Kernels: projectiontest.Place("node-1", res.KernelIDs, device, amount)}))
	return res
}

// end terminates a session at the clock's time: its kernels are removed
// and their allocations released.
func (e *env) end(t *testing.T, res commands.RequestSessionResult) {
	t.Helper()
	e.step(e.h.TerminateSession.Handle(ctx, projectiontest.MD, commands.TerminateSession{SessionID: res.SessionID}))
	for _, k := range res.KernelIDs {
		e.step(e.h.ReportKernelStatus.Handle(ctx, projectiontest.MD, commands.ReportKernelStatus{
			SessionID: res.SessionID, KernelID: k, AgentID: "node-1", Phase: domain.PhaseRemoved, ContainerID: "c-" + k.String()[:8]}))
	}
}

// workload writes, with restart called half-way when not nil:
//   - alice (a user with a record) in acme/ml: 1 CPU, 1 GiB, 0.5 GPU
//     shares from 2025-03-01 23:00 to 03-02 01:00 (across midnight);
//   - bob (no user record) in acme/cv: 1 CPU, 1 GiB, one whole GPU from
//     03-02 12:00, still running;
//   - carol in other/ml: 1 CPU, 1 GiB from 03-02 10:00 to 10:30;
//   - a session of alice cancelled while pending (never started).
func (e *env) workload(t *testing.T, restart func()) {
	t.Helper()
	h, md := e.h, projectiontest.MD
	e.step(h.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: superadmin, Name: "default"}))
	e.step(h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: "acme"}}))
	u, err := h.CreateUser.Handle(ctx, commands.Metadata{RequestID: "create-alice"}, commands.CreateUser{Actor: superadmin,
		Spec: domain.UserSpec{Email: "alice@example.com", Domain: "acme", ResourcePolicy: "default"}, Password: "password-alice"})
	e.step(commands.Result{Position: u.Position}, err)
	e.alice = u.UserID
	e.step(h.ModifyUser.Handle(ctx, md, commands.ModifyUser{Actor: superadmin, UserID: e.alice, Changes: domain.UserChanges{Username: ptr("alice")}}))
	out, err := h.RegisterAgent.Handle(ctx, md, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 64)})
	e.step(commands.Result{Position: out.Position}, err)

	e.clock.set(at("2025-03-01", 23, 0))
	alice := e.session(t, e.alice.String(), "acme", "ml", domain.SlotCUDAShares, "0.5", "GPU-0")
	pending, err := h.RequestSession.Handle(ctx, md, commands.RequestSession{Spec: projectiontest.SessionSpec(e.alice.String(), "", 1)})
	e.step(commands.Result{Position: pending.Position}, err)
	e.step(h.CancelPendingSession.Handle(ctx, md, commands.CancelPendingSession{SessionID: pending.SessionID}))
	e.clock.set(at("2025-03-02", 1, 0))
	e.end(t, alice)
	if restart != nil {
		restart()
	}
	e.clock.set(at("2025-03-02", 10, 0))
	carol := e.session(t, "carol", "other", "ml", "", "", "")
	e.clock.set(at("2025-03-02", 10, 30))
	e.end(t, carol)
	e.clock.set(at("2025-03-02", 12, 0))
	e.session(t, "bob", "acme", "cv", domain.SlotCUDADevice, "1", "GPU-1")
}

func ptr[T any](v T) *T { return &v }

// want is the expected usage of one row, in hours.
type want struct {
	day, user, domain, project string
	sessions                   int64
	cpu, mem, shares, devices  float64
	kernel                     float64
}

func check(t *testing.T, got []usage.Row, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(wants), got)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, w := range wants {
		r := got[i]
		if r.Day != w.day || r.UserID != w.user || r.Domain != w.domain || r.Project != w.project || r.Sessions != w.sessions ||
			!near(r.Hours(domain.SlotCPU), w.cpu) || !near(r.Hours(domain.SlotMem), w.mem) ||
			!near(r.Hours(domain.SlotCUDAShares), w.shares) || !near(r.Hours(domain.SlotCUDADevice), w.devices) ||
			!near(r.KernelHours(), w.kernel) {
			t.Errorf("row %d: %+v (cpu %g mem %g shares %g devices %g kernel %g h), want %+v", i, r,
				r.Hours(domain.SlotCPU), r.Hours(domain.SlotMem), r.Hours(domain.SlotCUDAShares), r.Hours(domain.SlotCUDADevice), r.KernelHours(), w)
		}
	}
}

// TestUsage: a span across midnight is split over its two days; GPU
// shares and whole devices are kept apart; a running kernel counts up to
// the query's now (and moves with it); the groupings, the filters and
// the range select what they say; users carry their names.
func TestUsage(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 4})
		e.workload(t, nil)
		e.r.WaitFor(t, e.last)
		a := e.alice.String()
		now := at("2025-03-02", 18, 0)
		q := func(g usage.GroupBy, from, to string, f func(*usage.Query)) []usage.Row {
			t.Helper()
			query := usage.Query{GroupBy: g, From: from, To: to, Now: now}
			if f != nil {
				f(&query)
			}
			rows, err := e.rm.Usage(ctx, query)
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}

		byUser := q(usage.ByUser, "2025-03-01", "2025-03-02", nil)
		check(t, byUser, []want{
			{day: "2025-03-01", user: a, domain: "acme", sessions: 1, cpu: 1, mem: 1, shares: 0.5, kernel: 1},
			{day: "2025-03-02", user: "bob", domain: "acme", sessions: 1, cpu: 6, mem: 6, devices: 6, kernel: 6},
			{day: "2025-03-02", user: a, domain: "acme", cpu: 1, mem: 1, shares: 0.5, kernel: 1},
			{day: "2025-03-02", user: "carol", domain: "other", sessions: 1, cpu: 0.5, mem: 0.5, kernel: 0.5},
		})
		if r := byUser[0]; r.Email != "alice@example.com" || r.Username != "alice" {
			t.Errorf("alice's names: %q %q", r.Email, r.Username)
		}
		if r := byUser[1]; r.Email != "" || r.Username != "" {
			t.Errorf("a user without a record has no names: %q %q", r.Email, r.Username)
		}

		check(t, q(usage.ByProject, "2025-03-01", "2025-03-02", func(q *usage.Query) { q.Domain = "acme" }), []want{
			{day: "2025-03-01", domain: "acme", project: "ml", sessions: 1, cpu: 1, mem: 1, shares: 0.5, kernel: 1},
			{day: "2025-03-02", domain: "acme", project: "cv", sessions: 1, cpu: 6, mem: 6, devices: 6, kernel: 6},
			{day: "2025-03-02", domain: "acme", project: "ml", cpu: 1, mem: 1, shares: 0.5, kernel: 1},
		})
		check(t, q(usage.ByDomain, "2025-03-02", "2025-03-02", nil), []want{
			{day: "2025-03-02", domain: "acme", sessions: 1, cpu: 7, mem: 7, shares: 0.5, devices: 6, kernel: 7},
			{day: "2025-03-02", domain: "other", sessions: 1, cpu: 0.5, mem: 0.5, kernel: 0.5},
		})
		check(t, q(usage.ByUser, "2025-03-01", "2025-03-02", func(q *usage.Query) { q.UserID = a }), []want{
			{day: "2025-03-01", user: a, domain: "acme", sessions: 1, cpu: 1, mem: 1, shares: 0.5, kernel: 1},
			{day: "2025-03-02", user: a, domain: "acme", cpu: 1, mem: 1, shares: 0.5, kernel: 1},
		})
		check(t, q(usage.ByProject, "2025-03-01", "2025-03-02", func(q *usage.Query) { q.Domain, q.Project = "other", "ml" }), []want{
			{day: "2025-03-02", domain: "other", project: "ml", sessions: 1, cpu: 0.5, mem: 0.5, kernel: 0.5},
		})
		// The running kernel moves with now, split at midnight too.
		now = at("2025-03-03", 6, 0)
		check(t, q(usage.ByUser, "2025-03-02", "2025-03-04", func(q *usage.Query) { q.UserID = "bob" }), []want{
			{day: "2025-03-02", user: "bob", domain: "acme", sessions: 1, cpu: 12, mem: 12, devices: 12, kernel: 12},
			{day: "2025-03-03", user: "bob", domain: "acme", cpu: 6, mem: 6, devices: 6, kernel: 6},
		})
		if rows := q(usage.ByDomain, "2025-02-01", "2025-02-28", nil); len(rows) != 0 {
			t.Errorf("a range before everything: %+v", rows)
		}
	})
}

// TestQueryRefusesBadInput: each bad parameter is KindInvalid naming it.
func TestQueryRefusesBadInput(t *testing.T) {
	rm := usage.New(projectiontest.SQLite(t).DB)
	for _, tc := range []struct {
		q     usage.Query
		field string
	}{
		{usage.Query{GroupBy: "kernel", From: "2025-01-01", To: "2025-01-02"}, "group_by"},
		{usage.Query{GroupBy: usage.ByUser, From: "2025-1-1", To: "2025-01-02"}, "from"},
		{usage.Query{GroupBy: usage.ByUser, From: "2025-01-01", To: "tomorrow"}, "to"},
		{usage.Query{GroupBy: usage.ByUser, From: "2025-01-03", To: "2025-01-02"}, "from"},
		{usage.Query{GroupBy: usage.ByUser, From: "2024-01-01", To: "2025-01-01"}, "to"},
		{usage.Query{GroupBy: usage.ByProject, From: "2025-01-01", To: "2025-01-02", Project: "ml"}, "domain"},
	} {
		_, err := rm.Usage(ctx, tc.q)
		var de *domain.Error
		if !errorsAs(err, &de) || de.Kind != domain.KindInvalid || de.Field != tc.field {
			t.Errorf("%+v: %v, want invalid %s", tc.q, err, tc.field)
		}
	}
	// 366 days (a leap year) is the most one request covers.
	if _, _, err := usage.Days("op", "2024-01-01", "2024-12-31"); err != nil {
		t.Errorf("366 days: %v", err)
	}
}

func dumpAll(t *testing.T, db *projections.DB) []string {
	t.Helper()
	var out []string
	out = append(out, projectiontest.Dump(t, db, "usage_users", 3, "user_id")...)
	out = append(out, projectiontest.Dump(t, db, "usage_sessions", 5, "session_id")...)
	out = append(out, projectiontest.Dump(t, db, "usage_kernels", 7, "kernel_id")...)
	out = append(out, projectiontest.Dump(t, db, "usage_kernel_slots", 3, "kernel_id, slot")...)
	return append(out, projectiontest.Dump(t, db, "usage_days", 6, "kernel_id, day")...)
}

// TestRebuildEqualsLive: the live projector, restarted half-way with
// small batches, and a rebuild from position 0 write the same rows.
func TestRebuildEqualsLive(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 3})
		e.workload(t, func() {
			if err := e.r.Stop(); err != nil {
				t.Fatal(err)
			}
			e.r = projectiontest.Start(t, b.DB, b, e.rm, projections.Options{BatchSize: 2})
		})
		e.r.WaitFor(t, e.last)
		if err := e.r.Stop(); err != nil {
			t.Fatal(err)
		}
		live := dumpAll(t, b.DB)
		if len(projectiontest.Dump(t, b.DB, "usage_days", 6, "kernel_id, day")) != 3 {
			t.Fatalf("want 3 day rows (alice's two days, carol's one): %v", live)
		}
		p, err := projections.NewProjector(b.DB, b.Store, usage.New(b.DB), projections.Options{BatchSize: 500, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(live, dumpAll(t, b.DB)); diff != "" {
			t.Fatalf("rebuild differs from the live rows:\n%s", diff)
		}
	})
}

var errorsAs = errors.As

// TestEveryEndClosesTheKernels: however a session ends (terminated by
// its user, ERROR, forced while terminating, its agent lost), each of its
// kernels' allocations is closed into day rows, and nothing is left
// counting up to now.
func TestEveryEndClosesTheKernels(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 3})
		h, md := e.h, projectiontest.MD
		for _, a := range []string{"node-1", "node-2"} {
			out, err := h.RegisterAgent.Handle(ctx, md, commands.RegisterAgent{Spec: projectiontest.AgentSpec(a, 64)})
			e.step(commands.Result{Position: out.Position}, err)
		}
		schedule := func(agent string, size int) commands.RequestSessionResult {
			res, err := h.RequestSession.Handle(ctx, md, commands.RequestSession{Spec: projectiontest.SessionSpec("alice", "0.1", size)})
			e.step(commands.Result{Position: res.Position}, err)
			e.step(h.ScheduleSession.Handle(ctx, md, commands.ScheduleSession{SessionID: res.SessionID,
				Kernels: projectiontest.Place(agent, res.KernelIDs, "GPU-0", "0.1")}))
			return res
		}
		report := func(res commands.RequestSessionResult, agent string, phase domain.KernelPhase) {
			for _, k := range res.KernelIDs {
				e.step(h.ReportKernelStatus.Handle(ctx, md, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: k, AgentID: agent,
					Phase: phase, ContainerID: "c-" + k.String()[:8], Reason: domain.ReasonFailedToStart}))
			}
		}
		kernels := 0
		e.clock.set(at("2025-03-01", 20, 0))
		terminated := schedule("node-1", 2)
		failed := schedule("node-1", 1)
		forced := schedule("node-1", 2)
		schedule("node-2", 3) // lost with its agent
		kernels += 2 + 1 + 2 + 3
		e.clock.set(at("2025-03-02", 4, 0))
		e.step(h.TerminateSession.Handle(ctx, md, commands.TerminateSession{SessionID: terminated.SessionID}))
		report(terminated, "node-1", domain.PhaseRemoved)
		report(failed, "node-1", domain.PhaseFailed)
		e.step(h.TerminateSession.Handle(ctx, md, commands.TerminateSession{SessionID: forced.SessionID}))
		e.step(h.ForceTerminateSession.Handle(ctx, md, commands.ForceTerminateSession{SessionID: forced.SessionID}))
		e.step(h.MarkAgentLost.Handle(ctx, md, commands.MarkAgentLost{AgentID: "node-2"}))
		e.r.WaitFor(t, e.last)

		if open := projectiontest.Dump(t, b.DB, "usage_kernels WHERE released_ms IS NULL", 7, "kernel_id"); len(open) != 0 {
			t.Fatalf("kernels still open: %v", open)
		}
		if days := projectiontest.Dump(t, b.DB, "usage_days", 6, "kernel_id, day"); len(days) != 2*kernels {
			t.Fatalf("%d day rows, want %d (every kernel over two days): %v", len(days), 2*kernels, days)
		}
		rows, err := e.rm.Usage(ctx, usage.Query{GroupBy: usage.ByUser, From: "2025-03-01", To: "2025-03-02", Now: at("2025-03-09", 0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		check(t, rows, []want{
			{day: "2025-03-01", user: "alice", domain: "default", sessions: 4, cpu: 4 * 8, mem: 4 * 8, shares: 0.4 * 8, kernel: 4 * 8},
			{day: "2025-03-02", user: "alice", domain: "default", cpu: 4 * 8, mem: 4 * 8, shares: 0.4 * 8, kernel: 4 * 8},
		})
	})
}
