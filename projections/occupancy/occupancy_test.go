package occupancy_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/occupancy"
)

var ctx = context.Background()

type env struct {
	b  *projectiontest.Backend
	h  *commands.Handlers
	rm *occupancy.ReadModel
	r  *projectiontest.Running
	// last is the position of the last write.
	last uint64
}

func newEnv(t *testing.T, b *projectiontest.Backend, opts projections.Options) *env {
	t.Helper()
	rm := occupancy.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	return &env{b: b, h: projectiontest.Handlers(t, b), rm: rm, r: projectiontest.Start(t, b.DB, b, rm, opts)}
}

func (e *env) wrote(t *testing.T, pos uint64, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	e.last = max(e.last, pos)
}

func (e *env) request(t *testing.T, owner, shares string, size int) commands.RequestSessionResult {
	t.Helper()
	res, err := e.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec(owner, shares, size)})
	e.wrote(t, res.Position, err)
	return res
}

func (e *env) schedule(t *testing.T, res commands.RequestSessionResult, agent, device, amount string) {
	t.Helper()
	out, err := e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
		SessionID: res.SessionID, Kernels: projectiontest.Place(agent, res.KernelIDs, device, amount)})
	e.wrote(t, out.Position, err)
}

func (e *env) report(t *testing.T, res commands.RequestSessionResult, agent string, phase domain.KernelPhase) {
	t.Helper()
	for _, k := range res.KernelIDs {
		out, err := e.h.ReportKernelStatus.Handle(ctx, projectiontest.MD, commands.ReportKernelStatus{
			SessionID: res.SessionID, KernelID: k, AgentID: agent, Phase: phase, ContainerID: "c-" + k.String()[:8], Reason: domain.ReasonFailedToStart})
		e.wrote(t, out.Position, err)
	}
}

// workload writes sessions of alice and bob ending every way a session
// can end, and leaves some pending, some running, one TERMINATING. With
// restart, the projector is restarted half-way.
func (e *env) workload(t *testing.T, restart func()) {
	t.Helper()
	h, md := e.h, projectiontest.MD
	for _, a := range []string{"node-1", "node-2"} {
		out, err := h.RegisterAgent.Handle(ctx, md, commands.RegisterAgent{Spec: projectiontest.AgentSpec(a, 64)})
		e.wrote(t, out.Position, err)
	}
	for i := range 12 {
		owner := []string{"alice", "bob"}[i/6]
		res := e.request(t, owner, "0.1", 1+i%3)
		agent := []string{"node-1", "node-2"}[i%2]
		switch i % 6 {
		case 0: // pending
		case 1: // cancelled
			out, err := h.CancelPendingSession.Handle(ctx, md, commands.CancelPendingSession{SessionID: res.SessionID})
			e.wrote(t, out.Position, err)
		case 2: // running
			e.schedule(t, res, agent, "GPU-0", "0.1")
			e.report(t, res, agent, domain.PhaseRunning)
		case 3: // ERROR
			e.schedule(t, res, agent, "GPU-1", "0.1")
			e.report(t, res, agent, domain.PhaseFailed)
		case 4: // TERMINATING, then forced
			e.schedule(t, res, agent, "GPU-0", "0.1")
			out, err := h.TerminateSession.Handle(ctx, md, commands.TerminateSession{SessionID: res.SessionID})
			e.wrote(t, out.Position, err)
			if i > 6 {
				out, err := h.ForceTerminateSession.Handle(ctx, md, commands.ForceTerminateSession{SessionID: res.SessionID})
				e.wrote(t, out.Position, err)
			}
		case 5: // terminated by its user
			e.schedule(t, res, agent, "GPU-1", "0.1")
			out, err := h.TerminateSession.Handle(ctx, md, commands.TerminateSession{SessionID: res.SessionID})
			e.wrote(t, out.Position, err)
			e.report(t, res, agent, domain.PhaseRemoved)
		}
		if i == 6 && restart != nil {
			restart()
		}
	}
	// A running session on node-2 is lost with its agent.
	res := e.request(t, "bob", "0.25", 2)
	e.schedule(t, res, "node-2", "GPU-0", "0.25")
	out, err := h.MarkAgentLost.Handle(ctx, md, commands.MarkAgentLost{AgentID: "node-2"})
	e.wrote(t, out.Position, err)
}

// ledger folds the log up to the last write.
func (e *env) ledger(t *testing.T) quota.Snapshot {
	t.Helper()
	b := quotas.NewBook()
	for _, ev := range projectiontest.Events(t, e.b.Store, e.last) {
		if err := b.ApplyRecorded(ev); err != nil {
			t.Fatal(err)
		}
	}
	return b.Ledger.Snapshot()
}

// TestReadModelMirrorsTheLedger: the rows give exactly the occupancy the
// pure fold gives from the same events, for every subject, by the
// snapshot and by the one-subject query.
func TestReadModelMirrorsTheLedger(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 4})
		e.workload(t, nil)
		e.r.WaitFor(t, e.last)
		want := e.ledger(t)
		got, err := e.rm.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read model:\n%+v\nledger:\n%+v", got, want)
		}
		if len(want[quota.ScopeKeypair]) != 2 || want.Of(quota.ScopeKeypair, "AK-alice").Concurrent == 0 || want.Of(quota.ScopeKeypair, "AK-alice").Pending == 0 {
			t.Fatalf("the workload should leave both keys holding and queueing: %+v", want)
		}
		for _, scope := range quota.Scopes {
			for key, o := range want[scope] {
				one, err := e.rm.Of(ctx, scope, key)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(one, o) {
					t.Errorf("%s %s: Of %+v, want %+v", scope, key, one, o)
				}
			}
		}
		if o, err := e.rm.Of(ctx, quota.ScopeUser, "nobody"); err != nil || !o.IsZero() {
			t.Fatalf("unknown subject: %+v %v", o, err)
		}
		if _, err := e.rm.Of(ctx, "galaxy", "x"); domain.KindOf(err) != domain.KindInvalid {
			t.Fatalf("unknown scope: %v", err)
		}
	})
}

// TestEndedSessionsLeaveNoRows: once every session has ended and its
// allocations are released, the tables are empty.
func TestEndedSessionsLeaveNoRows(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 3})
		out, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 64)})
		e.wrote(t, out.Position, err)
		for i := range 4 {
			res := e.request(t, "alice", "", 2)
			e.schedule(t, res, "node-1", "", "")
			if i%2 == 0 {
				e.report(t, res, "node-1", domain.PhaseFailed)
				continue
			}
			out, err := e.h.TerminateSession.Handle(ctx, projectiontest.MD, commands.TerminateSession{SessionID: res.SessionID})
			e.wrote(t, out.Position, err)
			e.report(t, res, "node-1", domain.PhaseRemoved)
		}
		e.r.WaitFor(t, e.last)
		for _, table := range []string{"occupancy_sessions", "occupancy_requested", "occupancy_allocations", "occupancy_totals"} {
			if rows := projectiontest.Dump(t, b.DB, table, 3, "1"); len(rows) != 0 {
				t.Errorf("%s: %d rows left: %v", table, len(rows), rows)
			}
		}
	})
}

func dumpAll(t *testing.T, db *projections.DB) []string {
	t.Helper()
	var out []string
	out = append(out, projectiontest.Dump(t, db, "occupancy_sessions", 7, "session_id")...)
	out = append(out, projectiontest.Dump(t, db, "occupancy_requested", 3, "session_id, slot")...)
	out = append(out, projectiontest.Dump(t, db, "occupancy_allocations", 4, "kernel_id, slot")...)
	return append(out, projectiontest.Dump(t, db, "occupancy_totals", 5, "scope, subject, kind, slot")...)
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
		if len(live) == 0 {
			t.Fatal("nothing projected")
		}
		p, err := projections.NewProjector(b.DB, b.Store, occupancy.New(b.DB), projections.Options{BatchSize: 500, Logger: projectiontest.Discard})
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
