package commands_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestDisconnectAndReconnectAgent: a silent agent's sessions are
// DISCONNECTED and keep their allocations, the agent takes no new
// placement; its heartbeat brings it back and the sessions whose kernel it
// reports running return to RUNNING with the same container; a session
// elsewhere is untouched; repeating either command changes nothing.
func TestDisconnectAndReconnectAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))

	onA1 := e.requestSession(t, sessionSpec("0.5"))
	e.schedule(t, onA1, "a1", "GPU-0", "0.5")
	e.report(t, commands.ReportKernelStatus{SessionID: onA1.SessionID, KernelID: onA1.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1"})
	starting := e.requestSession(t, sessionSpec(""))
	e.schedule(t, starting, "a1", "", "")
	onA2 := e.requestSession(t, sessionSpec(""))
	e.schedule(t, onA2, "a2", "", "")

	if _, err := e.handlers.DisconnectAgent.Handle(ctx, e.md, commands.DisconnectAgent{AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []commands.RequestSessionResult{onA1, starting} {
		if s := e.session(t, id.SessionID); s.Status() != domain.StatusDisconnected || s.StatusReason() != domain.ReasonAgentDisconnected {
			t.Fatalf("session %s: %s %s", id.SessionID, s.Status(), s.StatusReason())
		}
	}
	if s := e.session(t, onA2.SessionID); s.Status() != domain.StatusScheduled {
		t.Fatalf("a session elsewhere was touched: %s", s.Status())
	}
	a1 := e.agent(t, "a1")
	if a1.Status() != domain.AgentStatusDisconnected || len(a1.Allocations()) != 2 {
		t.Fatalf("a1 %s %+v: want disconnected, allocations kept", a1.Status(), a1.Allocations())
	}
	n := len(e.read(t, domain.AgentStream("a1").String()))
	if _, err := e.handlers.DisconnectAgent.Handle(ctx, e.md, commands.DisconnectAgent{AgentID: "a1"}); err != nil || len(e.read(t, domain.AgentStream("a1").String())) != n {
		t.Fatalf("repeating: %v", err)
	}

	// Nothing new lands on a disconnected agent.
	next := e.requestSession(t, sessionSpec(""))
	_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: next.SessionID, Kernels: placeOn("a1", next.KernelIDs, "", "")})
	wantKind(t, err, domain.KindConflict)

	// A heartbeat: a1 runs onA1's kernel (the other one has not started).
	if _, err := e.handlers.ReconnectAgent.Handle(ctx, e.md, commands.ReconnectAgent{AgentID: "a1", Running: []uuid.UUID{onA1.KernelIDs[0]}}); err != nil {
		t.Fatal(err)
	}
	s := e.session(t, onA1.SessionID)
	k, _ := s.Kernel(onA1.KernelIDs[0])
	if s.Status() != domain.StatusRunning || s.StatusReason() != domain.ReasonAgentReconnected || k.ContainerID() != "c1" {
		t.Fatalf("onA1 %s %s container %q", s.Status(), s.StatusReason(), k.ContainerID())
	}
	if s := e.session(t, starting.SessionID); s.Status() != domain.StatusDisconnected {
		t.Fatalf("a session whose kernel was not reported reconnected: %s", s.Status())
	}
	if a1 := e.agent(t, "a1"); a1.Status() != domain.AgentStatusAlive || len(a1.Allocations()) != 2 {
		t.Fatalf("a1 %s %+v", a1.Status(), a1.Allocations())
	}
	e.schedule(t, next, "a1", "", "")

	// The other kernel's own report brings its session back too.
	e.report(t, commands.ReportKernelStatus{SessionID: starting.SessionID, KernelID: starting.KernelIDs[0], AgentID: "a1", Phase: domain.PhasePreparing})
	if s := e.session(t, starting.SessionID); s.Status() != domain.StatusPreparing {
		t.Fatalf("starting: %s %s", s.Status(), s.StatusReason())
	}
}

// TestReconnectALostAgent: an agent given up on cannot come back by a
// heartbeat; it registers again.
func TestReconnectALostAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	if _, err := e.handlers.MarkAgentLost.Handle(ctx, e.md, commands.MarkAgentLost{AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.handlers.ReconnectAgent.Handle(ctx, e.md, commands.ReconnectAgent{AgentID: "a1"})
	wantKind(t, err, domain.KindConflict)
	_, err = e.handlers.DisconnectAgent.Handle(ctx, e.md, commands.DisconnectAgent{AgentID: "nobody"})
	wantKind(t, err, domain.KindNotFound)
}
