package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// TestMarkAgentLost: every session holding an allocation on the lost agent
// goes to ERROR(agent-lost), all its kernels' allocations are released
// (also on other agents), the agent is lost; a session elsewhere is
// untouched; repeating the command changes nothing.
func TestMarkAgentLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))

	onA1 := e.requestSession(t, sessionSpec("0.5"))
	e.schedule(t, onA1, "a1", "GPU-0", "0.5")
	e.report(t, commands.ReportKernelStatus{SessionID: onA1.SessionID, KernelID: onA1.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1"})

	spec := sessionSpec("")
	spec.ClusterSize, spec.ClusterMode = 2, domain.ClusterMultiNode
	spanning := e.requestSession(t, spec)
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: spanning.SessionID, Kernels: []domain.KernelPlacement{
		{KernelID: spanning.KernelIDs[0], AgentID: "a2"}, {KernelID: spanning.KernelIDs[1], AgentID: "a1"},
	}}); err != nil {
		t.Fatal(err)
	}
	onA2 := e.requestSession(t, sessionSpec(""))
	e.schedule(t, onA2, "a2", "", "")

	out, err := e.handlers.MarkAgentLost.Handle(ctx, e.md, commands.MarkAgentLost{AgentID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []commands.RequestSessionResult{onA1, spanning} {
		if s := e.session(t, id.SessionID); s.Status() != domain.StatusError || s.StatusReason() != domain.ReasonAgentLost {
			t.Fatalf("session %s: %s %s", id.SessionID, s.Status(), s.StatusReason())
		}
	}
	if s := e.session(t, onA2.SessionID); s.Status() != domain.StatusScheduled {
		t.Fatalf("a session elsewhere was touched: %s", s.Status())
	}
	a1, a2 := e.agent(t, "a1"), e.agent(t, "a2")
	if a1.Status() != domain.AgentStatusLost || len(a1.Allocations()) != 0 {
		t.Fatalf("a1 %s %+v", a1.Status(), a1.Allocations())
	}
	if al := a2.Allocations(); len(al) != 1 || al[0].SessionID != onA2.SessionID {
		t.Fatalf("a2 holds %+v, want only the untouched session", al)
	}
	if out.Position != e.lastPosition(t, domain.AgentStream("a1").String()) {
		t.Fatalf("position %d", out.Position)
	}

	n := len(e.read(t, domain.AgentStream("a1").String()))
	if _, err := e.handlers.MarkAgentLost.Handle(ctx, e.md, commands.MarkAgentLost{AgentID: "a1"}); err != nil || len(e.read(t, domain.AgentStream("a1").String())) != n {
		t.Fatalf("repeating: %v", err)
	}

	// A lost agent takes nothing until it rejoins.
	next := e.requestSession(t, sessionSpec(""))
	_, err = e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: next.SessionID, Kernels: placeOn("a1", next.KernelIDs, "", "")})
	wantKind(t, err, domain.KindConflict)
	e.registerAgent(t, agentSpec("a1", 8))
	e.schedule(t, next, "a1", "", "")
}

func TestMarkUnknownAgentLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.handlers.MarkAgentLost.Handle(ctx, e.md, commands.MarkAgentLost{AgentID: "nobody"})
	wantKind(t, err, domain.KindNotFound)
}

// TestMarkAgentLostWhileAScheduleLands: a scheduler allocates on the agent
// between the loss handler's reading and its marking; the new session is
// failed too before the agent is marked lost, so no session is left
// SCHEDULED on a lost agent.
func TestMarkAgentLostWhileAScheduleLands(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	plain := newEnvOn(t, e)
	e.registerAgent(t, agentSpec("a1", 8))
	first := e.requestSession(t, sessionSpec(""))
	e.schedule(t, first, "a1", "", "")
	late := e.requestSession(t, sessionSpec(""))

	raced := false
	hs.set(func(h *hookStore) {
		h.onAppend = func(stream string, events []eventstore.EventData) {
			if raced || stream != domain.AgentStream("a1").String() || events[len(events)-1].Type != domain.TypeAgentLost {
				return
			}
			raced = true
			plain.schedule(t, late, "a1", "", "")
		}
	})
	if _, err := e.handlers.MarkAgentLost.Handle(ctx, e.md, commands.MarkAgentLost{AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("the race was not staged")
	}
	for _, res := range []commands.RequestSessionResult{first, late} {
		if s := e.session(t, res.SessionID); s.Status() != domain.StatusError {
			t.Fatalf("session left %s on a lost agent", s.Status())
		}
	}
	if a := e.agent(t, "a1"); a.Status() != domain.AgentStatusLost || len(a.Allocations()) != 0 {
		t.Fatalf("agent %s holds %+v", a.Status(), a.Allocations())
	}
}
