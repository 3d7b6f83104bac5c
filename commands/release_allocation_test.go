package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// allocateOnly leaves the crash window of ScheduleSession: the agent holds
// the session's kernel, the session is still PENDING.
func (e *env) allocateOnly(t testing.TB, res commands.RequestSessionResult, agent string) {
	t.Helper()
	s := e.session(t, res.SessionID)
	k, _ := s.Kernel(res.KernelIDs[0])
	ev, err := eventstore.NewEvent(domain.TypeAgentAllocated, domain.AgentAllocated{KernelID: k.ID(), SessionID: res.SessionID,
		Slots: k.Requested(), Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}}, At: t0}, e.md.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Append(ctx, domain.AgentStream(agent).String(), eventstore.Any, ev); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseAllocationOfAPendingSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	e.allocateOnly(t, res, "a1")

	cmd := commands.ReleaseAllocation{AgentID: "a1", KernelID: res.KernelIDs[0]}
	if _, err := e.handlers.ReleaseAllocation.Handle(ctx, e.md, cmd); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()), domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentReleased)
	// Again: nothing left to release.
	if _, err := e.handlers.ReleaseAllocation.Handle(ctx, e.md, cmd); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()), domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentReleased)
	if a := e.agent(t, "a1"); !a.Occupied().IsZero() {
		t.Fatalf("occupied %v", a.Occupied())
	}
}

func TestReleaseAllocationRefusesAScheduledSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	e.schedule(t, res, "a1", "GPU-0", "0.5")

	_, err := e.handlers.ReleaseAllocation.Handle(ctx, e.md, commands.ReleaseAllocation{AgentID: "a1", KernelID: res.KernelIDs[0]})
	wantKind(t, err, domain.KindConflict)
	if _, ok := e.agent(t, "a1").Allocation(res.KernelIDs[0]); !ok {
		t.Fatal("the allocation of a scheduled session was released")
	}
}

func TestForceTerminateSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	e.schedule(t, res, "a1", "GPU-0", "0.5")
	force := commands.ForceTerminateSession{SessionID: res.SessionID}

	_, err := e.handlers.ForceTerminateSession.Handle(ctx, e.md, force)
	wantKind(t, err, domain.KindConflict) // not terminating yet

	if _, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: res.SessionID}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second is a no-op
		if _, err := e.handlers.ForceTerminateSession.Handle(ctx, e.md, force); err != nil {
			t.Fatal(err)
		}
	}
	s := e.session(t, res.SessionID)
	if s.Status() != domain.StatusTerminated || s.StatusReason() != domain.ReasonForceTerminated {
		t.Fatalf("session %s/%s", s.Status(), s.StatusReason())
	}
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()), domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentReleased)
}
