package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
)

// TestDisconnectedAgentsAndSessions: nothing is placed on a disconnected
// agent, and a session disconnected while starting is not failed by the
// start timeout however long the agent is away; once the agent is back,
// new sessions land on it again.
func TestDisconnectedAgentsAndSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{StartTimeout: 5 * time.Minute, TerminatingTimeout: scheduler.Never})

	starting := e.request(cpuMem(1, 1), 1, "")
	e.AwaitStatus(starting.SessionID, domain.StatusScheduled)
	if _, err := e.Handlers.DisconnectAgent.Handle(bg, e.MD, commands.DisconnectAgent{AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(starting.SessionID, domain.StatusDisconnected)

	waiting := e.request(cpuMem(1, 1), 1, "")
	e.Await("the new session is refused a place", func() bool { return e.Session(waiting.SessionID).StatusReason() != "" })
	// Far past the start timeout: a disconnected session has none.
	e.Clock.Advance(30 * time.Minute)
	marker := e.request(cpuMem(1, 1), 1, "")
	e.Await("a later round ran", func() bool { return e.Session(marker.SessionID).StatusReason() != "" })
	if s := e.Session(starting.SessionID); s.Status() != domain.StatusDisconnected {
		t.Fatalf("starting: %s %s", s.Status(), s.StatusReason())
	}
	if s := e.Session(waiting.SessionID); s.Status() != domain.StatusPending {
		t.Fatalf("placed on a disconnected agent: %s", s.Status())
	}

	if _, err := e.Handlers.ReconnectAgent.Handle(bg, e.MD, commands.ReconnectAgent{AgentID: "a1", Running: []uuid.UUID{}}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(waiting.SessionID, domain.StatusScheduled)
	// The starting session comes back when its kernel reports; from then
	// on its start deadline counts afresh.
	k := e.Session(starting.SessionID).Kernels()[0]
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: starting.SessionID, KernelID: k.ID(), AgentID: "a1", Phase: domain.PhasePreparing,
	}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(starting.SessionID, domain.StatusPreparing)
	e.Clock.Advance(6 * time.Minute)
	if s := e.AwaitStatus(starting.SessionID, domain.StatusError); s.StatusReason() != domain.ReasonFailedToStart {
		t.Fatalf("reason %s", s.StatusReason())
	}
}

// TestAnAgentBackWithoutTheKernelFailsItsSession: a DISCONNECTED session
// whose agent came back but never reported its kernel does not stay
// DISCONNECTED forever: a start timeout after the return it goes to ERROR
// (kernel-lost) and its allocation is released.
func TestAnAgentBackWithoutTheKernelFailsItsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{StartTimeout: 5 * time.Minute, TerminatingTimeout: scheduler.Never})

	res := e.request(cpuMem(1, 1), 1, "")
	s := e.AwaitStatus(res.SessionID, domain.StatusScheduled)
	k := s.Kernels()[0]
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: res.SessionID, KernelID: k.ID(), AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1",
	}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(res.SessionID, domain.StatusRunning)
	if _, err := e.Handlers.DisconnectAgent.Handle(bg, e.MD, commands.DisconnectAgent{AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(res.SessionID, domain.StatusDisconnected)
	e.Clock.Advance(10 * time.Minute) // away longer than the start timeout: no verdict while away
	if _, err := e.Handlers.ReconnectAgent.Handle(bg, e.MD, commands.ReconnectAgent{AgentID: "a1", Running: []uuid.UUID{}}); err != nil {
		t.Fatal(err)
	}
	marker := e.request(cpuMem(1, 1), 1, "")
	e.AwaitStatus(marker.SessionID, domain.StatusScheduled) // a round ran after the return
	if s := e.Session(res.SessionID); s.Status() != domain.StatusDisconnected {
		t.Fatalf("failed as soon as the agent came back: %s %s", s.Status(), s.StatusReason())
	}
	e.Clock.Advance(6 * time.Minute)
	if s := e.AwaitStatus(res.SessionID, domain.StatusError); s.StatusReason() != domain.ReasonKernelLost {
		t.Fatalf("reason %s", s.StatusReason())
	}
	e.Await("the allocation is released", func() bool {
		_, held := e.Agent("a1").Allocation(k.ID())
		return !held
	})
}
