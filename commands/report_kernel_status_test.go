package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestReportKernelFailedReleasesEverything: one kernel of a multi-node
// session fails to start; the session is in ERROR and both kernels'
// allocations, on two agents, are released.
func TestReportKernelFailedReleasesEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))
	spec := sessionSpec("1")
	spec.ClusterSize, spec.ClusterMode = 2, domain.ClusterMultiNode
	res := e.requestSession(t, spec)
	placements := []domain.KernelPlacement{
		{KernelID: res.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("1")}}},
		{KernelID: res.KernelIDs[1], AgentID: "a2", Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: q("1")}}},
	}
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placements}); err != nil {
		t.Fatal(err)
	}
	e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1"})
	out := e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[1], AgentID: "a2", Phase: domain.PhaseFailed, Reason: domain.ReasonFailedToStart, Message: "no such image"})

	s := e.session(t, res.SessionID)
	if s.Status() != domain.StatusError || s.StatusReason() != domain.ReasonFailedToStart {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
	for _, id := range []string{"a1", "a2"} {
		if a := e.agent(t, id); len(a.Allocations()) != 0 {
			t.Fatalf("agent %s still holds %+v", id, a.Allocations())
		}
	}
	if out.Position != max(e.lastPosition(t, domain.AgentStream("a1").String()), e.lastPosition(t, domain.AgentStream("a2").String())) {
		t.Fatalf("position %d is not the last release", out.Position)
	}
}

func TestReportKernelRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec(""))
	pending := commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "a1", Phase: domain.PhasePreparing}
	_, err := e.handlers.ReportKernelStatus.Handle(ctx, e.md, pending)
	wantKind(t, err, domain.KindConflict)

	e.schedule(t, res, "a1", "", "")
	wrongAgent := pending
	wrongAgent.AgentID = "a2"
	_, err = e.handlers.ReportKernelStatus.Handle(ctx, e.md, wrongAgent)
	wantKind(t, err, domain.KindConflict)

	noSession := pending
	noSession.SessionID = unknownID
	_, err = e.handlers.ReportKernelStatus.Handle(ctx, e.md, noSession)
	wantKind(t, err, domain.KindNotFound)

	noContainer := pending
	noContainer.Phase = domain.PhaseRunning
	_, err = e.handlers.ReportKernelStatus.Handle(ctx, e.md, noContainer)
	wantKind(t, err, domain.KindInvalid)
}

// TestStartDeadlineVerdictNeedsAStartingSession: a failed-to-start verdict
// made on a stale view (WhileStarting) is refused once the session runs or
// is being terminated, and writes nothing; while it starts, it applies.
func TestStartDeadlineVerdictNeedsAStartingSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	verdict := func(res commands.RequestSessionResult) commands.ReportKernelStatus {
		return commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "a1",
			Phase: domain.PhaseFailed, Reason: domain.ReasonFailedToStart, WhileStarting: true}
	}

	moved := e.requestSession(t, sessionSpec(""))
	e.schedule(t, moved, "a1", "", "")
	e.report(t, commands.ReportKernelStatus{SessionID: moved.SessionID, KernelID: moved.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1"})
	if _, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: moved.SessionID}); err != nil {
		t.Fatal(err)
	}
	before := e.lastPosition(t, domain.SessionStream(moved.SessionID).String())
	_, err := e.handlers.ReportKernelStatus.Handle(ctx, e.md, verdict(moved))
	wantKind(t, err, domain.KindConflict)
	if s := e.session(t, moved.SessionID); s.Status() != domain.StatusTerminating || e.lastPosition(t, domain.SessionStream(moved.SessionID).String()) != before {
		t.Fatalf("a stale verdict changed the session: %s", s.Status())
	}

	starting := e.requestSession(t, sessionSpec(""))
	e.schedule(t, starting, "a1", "", "")
	e.report(t, verdict(starting))
	if s := e.session(t, starting.SessionID); s.Status() != domain.StatusError || s.StatusReason() != domain.ReasonFailedToStart {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
}
