package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/agents"
)

var ctx = context.Background()

type env struct {
	b  *projectiontest.Backend
	h  *commands.Handlers
	rm *agents.ReadModel
	r  *projectiontest.Running
}

func newEnv(t *testing.T, b *projectiontest.Backend) *env {
	t.Helper()
	rm := agents.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	return &env{b: b, h: projectiontest.Handlers(t, b), rm: rm, r: projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 4})}
}

func (e *env) register(t *testing.T, spec domain.AgentSpec) uint64 {
	t.Helper()
	out, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return out.Position
}

// get waits for position, then reads the agent and checks it against the
// aggregate folded from the same events.
func (e *env) get(t *testing.T, position uint64, id string) agents.Agent {
	t.Helper()
	e.r.WaitFor(t, position)
	got, err := e.rm.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := e.aggregate(t, id)
	if got.ID != want.ID() || got.Architecture != want.Architecture() || got.Status != want.Status() ||
		!sameSlots(got.Capacity, want.Capacity()) || !sameSlots(got.Occupied, want.Occupied()) ||
		!sameSlots(got.Free, want.Free()) || got.Allocations != len(want.Allocations()) ||
		!got.RegisteredAt.Equal(want.RegisteredAt()) {
		t.Errorf("agent %+v does not mirror the aggregate (status %s, occupied %v)", got, want.Status(), want.Occupied())
	}
	if (got.LostAt == nil) != want.LostAt().IsZero() || (got.LostAt != nil && !got.LostAt.Equal(want.LostAt())) {
		t.Errorf("lost_at %v, want %v", got.LostAt, want.LostAt())
	}
	if len(got.Devices) != len(want.Devices()) {
		t.Fatalf("%d devices, want %d", len(got.Devices), len(want.Devices()))
	}
	for i, d := range want.Devices() {
		if got.Devices[i].Device != d || got.Devices[i].Occupied != want.DeviceOccupied(d.ID).String() {
			t.Errorf("device %d = %+v, want %+v occupied %s", i, got.Devices[i], d, want.DeviceOccupied(d.ID))
		}
	}
	return got
}

func (e *env) aggregate(t *testing.T, id string) *domain.Agent {
	t.Helper()
	recs, err := e.b.Store.ReadStream(ctx, domain.AgentStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]domain.RecordedEvent, len(recs))
	for i, r := range recs {
		d, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = domain.RecordedEvent{Revision: r.Revision, Event: d}
	}
	a, err := domain.RehydrateAgent(evs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func sameSlots(a, b domain.Slots) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func TestOccupancyFollowsAllocations(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b)
		e.register(t, projectiontest.AgentSpec("node-1", 8))
		pos := e.register(t, projectiontest.AgentSpec("node-2", 16))
		if a := e.get(t, pos, "node-1"); a.Status != domain.AgentStatusAlive || a.Allocations != 0 || a.Devices[0].Occupied != "0" {
			t.Fatalf("fresh agent %+v", a)
		}

		// Two sessions on node-1 share GPU-0; one on node-2.
		var ids []commands.RequestSessionResult
		for i, place := range []struct{ agent, device, amount string }{{"node-1", "GPU-0", "0.5"}, {"node-1", "GPU-0", "0.25"}, {"node-2", "GPU-1", "1"}} {
			res, err := e.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec("alice", place.amount, 1)})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
				SessionID: res.SessionID, Kernels: projectiontest.Place(place.agent, res.KernelIDs, place.device, place.amount)})
			if err != nil {
				t.Fatalf("schedule %d: %v", i, err)
			}
			ids = append(ids, res)
			pos = out.Position
		}
		a := e.get(t, pos, "node-1")
		if a.Allocations != 2 || a.Occupied[domain.SlotCPU] != domain.Units(2) || a.Devices[0].Occupied != "0.75" || a.Devices[1].Occupied != "0" {
			t.Fatalf("node-1 %+v", a)
		}
		e.get(t, pos, "node-2")

		// The first session's kernel exits: its allocation goes.
		out, err := e.h.ReportKernelStatus.Handle(ctx, projectiontest.MD, commands.ReportKernelStatus{
			SessionID: ids[0].SessionID, KernelID: ids[0].KernelIDs[0], AgentID: "node-1", Phase: domain.PhaseExited})
		if err != nil {
			t.Fatal(err)
		}
		if a := e.get(t, out.Position, "node-1"); a.Allocations != 1 || a.Devices[0].Occupied != "0.25" {
			t.Fatalf("node-1 after a release %+v", a)
		}

		// node-1 goes silent: disconnected, its allocation kept; then back.
		out, err = e.h.DisconnectAgent.Handle(ctx, projectiontest.MD, commands.DisconnectAgent{AgentID: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		if a := e.get(t, out.Position, "node-1"); a.Status != domain.AgentStatusDisconnected || a.Allocations != 1 || a.LostAt != nil {
			t.Fatalf("disconnected node-1 %+v", a)
		}
		away, err := e.rm.ListAgents(ctx, agents.Filter{Status: domain.AgentStatusDisconnected})
		if err != nil || len(away) != 1 || away[0].ID != "node-1" {
			t.Fatalf("disconnected agents %+v, %v", away, err)
		}
		out, err = e.h.ReconnectAgent.Handle(ctx, projectiontest.MD, commands.ReconnectAgent{AgentID: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		if a := e.get(t, out.Position, "node-1"); a.Status != domain.AgentStatusAlive || a.Allocations != 1 {
			t.Fatalf("reconnected node-1 %+v", a)
		}

		// node-1 is lost: its sessions fail and everything is released.
		out, err = e.h.MarkAgentLost.Handle(ctx, projectiontest.MD, commands.MarkAgentLost{AgentID: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		a = e.get(t, out.Position, "node-1")
		if a.Status != domain.AgentStatusLost || a.LostAt == nil || a.Allocations != 0 || !a.Occupied.IsZero() {
			t.Fatalf("lost node-1 %+v", a)
		}
		lost, err := e.rm.ListAgents(ctx, agents.Filter{Status: domain.AgentStatusLost})
		if err != nil || len(lost) != 1 || lost[0].ID != "node-1" {
			t.Fatalf("lost agents %+v, %v", lost, err)
		}

		// It comes back with more CPUs: rejoined, alive, seen again.
		pos = e.register(t, projectiontest.AgentSpec("node-1", 12))
		a = e.get(t, pos, "node-1")
		if a.Status != domain.AgentStatusAlive || a.Capacity[domain.SlotCPU] != domain.Units(12) || !a.LastSeenAt.After(a.RegisteredAt) {
			t.Fatalf("rejoined node-1 %+v", a)
		}

		all, err := e.rm.ListAgents(ctx, agents.Filter{})
		if err != nil || len(all) != 2 || all[0].ID != "node-1" || all[1].ID != "node-2" {
			t.Fatalf("agents %+v, %v", all, err)
		}
		raw, err := json.Marshal(all[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"status":"alive"`, `"occupied":{"cpu":"1","cuda.shares":"1","mem":"1073741824"}`,
			`{"id":"GPU-1","kind":"cuda.device","model":"H100","memory":85899345920,"occupied":"1"}`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("JSON %s lacks %s", raw, want)
			}
		}

		if _, err := e.rm.GetAgent(ctx, "node-9"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("GetAgent(unknown) = %v, want KindNotFound", err)
		}
		if _, err := e.rm.ListAgents(ctx, agents.Filter{Status: "sleeping"}); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ListAgents(bad status) = %v, want KindInvalid", err)
		}

		// A rebuild produces the same rows.
		if err := e.r.Stop(); err != nil {
			t.Fatal(err)
		}
		live := dump(t, b.DB)
		p, err := projections.NewProjector(b.DB, b.Store, agents.New(b.DB), projections.Options{Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(live, dump(t, b.DB)); diff != "" {
			t.Fatalf("rebuild differs from the live rows:\n%s", diff)
		}
	})
}

func dump(t *testing.T, db *projections.DB) []string {
	t.Helper()
	return append(projectiontest.Dump(t, db, "agents", 12, "id"),
		projectiontest.Dump(t, db, "agent_allocations", 7, "agent_id, kernel_id")...)
}
