package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestBatchSessionLifecycle is the walking skeleton's write path: request,
// schedule on an agent, the agent's reports, a failing exit, and the
// allocation given back.
func TestBatchSessionLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	kernel := res.KernelIDs[0]
	e.schedule(t, res, "a1", "GPU-0", "0.5")

	a := e.agent(t, "a1")
	if al, ok := a.Allocation(kernel); !ok || al.SessionID != res.SessionID || a.DeviceFree("GPU-0") != q("0.5") {
		t.Fatalf("allocation %+v %v", al, ok)
	}
	report := func(phase domain.KernelPhase) commands.ReportKernelStatus {
		return commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: kernel, AgentID: "a1", Phase: phase}
	}
	e.report(t, report(domain.PhasePreparing))
	e.report(t, report(domain.PhaseCreating))
	running := report(domain.PhaseRunning)
	running.ContainerID = "c0ffee"
	e.report(t, running)
	if s := e.session(t, res.SessionID); s.Status() != domain.StatusRunning || s.StartedAt().IsZero() {
		t.Fatalf("status %s", s.Status())
	}
	exited := report(domain.PhaseExited)
	exited.ExitCode = 3
	out := e.report(t, exited)

	wantTypes(t, e.types(t, domain.SessionStream(res.SessionID).String()),
		domain.TypeSessionRequested, domain.TypeSessionScheduled,
		domain.TypeKernelPreparing, domain.TypeSessionStatusChanged,
		domain.TypeKernelCreating, domain.TypeSessionStatusChanged,
		domain.TypeKernelRunning, domain.TypeSessionStatusChanged,
		domain.TypeKernelExited, domain.TypeSessionTerminated)
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()),
		domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentReleased)

	s := e.session(t, res.SessionID)
	code, _ := s.ExitCode()
	if s.Status() != domain.StatusTerminated || s.StatusReason() != domain.ReasonTaskFailed || s.Result() != domain.ResultFailure || code != 3 {
		t.Fatalf("%s %s %s %d", s.Status(), s.StatusReason(), s.Result(), code)
	}
	if a := e.agent(t, "a1"); !a.Occupied().IsZero() || a.DeviceFree("GPU-0") != domain.DeviceShareCapacity {
		t.Fatalf("occupied %v after the kernel ended", a.Occupied())
	}
	// The result is the position of the last append: the release.
	if out.Position != e.lastPosition(t, domain.AgentStream("a1").String()) {
		t.Fatalf("position %d, want the release's", out.Position)
	}

	// The container removed afterwards: no news, nothing appended; the
	// position is that of the newest state the command looked at.
	before := e.lastPosition(t, domain.AgentStream("a1").String())
	out = e.report(t, report(domain.PhaseRemoved))
	if out.Position != before || len(e.types(t, domain.SessionStream(res.SessionID).String())) != 10 || len(e.types(t, domain.AgentStream("a1").String())) != 3 {
		t.Fatalf("a late report appended something (position %d, before %d)", out.Position, before)
	}
}

// TestTerminateRunningSession: DELETE → TERMINATING(user-requested) → the
// agent reports the container removed → TERMINATED, allocation released;
// a second DELETE is idempotent.
func TestTerminateRunningSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	spec := sessionSpec("")
	spec.Type, spec.Command = domain.SessionInteractive, ""
	res := e.requestSession(t, spec)
	e.schedule(t, res, "a1", "", "")
	e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRunning, ContainerID: "c1"})

	out, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: res.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if s := e.session(t, res.SessionID); s.Status() != domain.StatusTerminating || s.StatusReason() != domain.ReasonUserRequested {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
	if out.Position != e.lastPosition(t, domain.SessionStream(res.SessionID).String()) {
		t.Fatalf("position %d", out.Position)
	}
	if _, held := e.agent(t, "a1").Allocation(res.KernelIDs[0]); !held {
		t.Fatal("a terminating session must keep its allocation until its container is gone")
	}

	e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "a1", Phase: domain.PhaseRemoved})
	s := e.session(t, res.SessionID)
	if s.Status() != domain.StatusTerminated || s.StatusReason() != domain.ReasonUserRequested || s.Result() != domain.ResultUndefined {
		t.Fatalf("%s %s %s", s.Status(), s.StatusReason(), s.Result())
	}
	if !e.agent(t, "a1").Occupied().IsZero() {
		t.Fatal("allocation not released")
	}

	last := max(e.lastPosition(t, domain.SessionStream(res.SessionID).String()), e.lastPosition(t, domain.AgentStream("a1").String()))
	n := len(e.read(t, domain.SessionStream(res.SessionID).String())) + len(e.read(t, domain.AgentStream("a1").String()))
	out, err = e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: res.SessionID})
	if err != nil || out.Position != last || len(e.read(t, domain.SessionStream(res.SessionID).String()))+len(e.read(t, domain.AgentStream("a1").String())) != n {
		t.Fatalf("terminating a terminated session: %v, position %d (last %d)", err, out.Position, last)
	}
}

func TestTerminatePendingSessionCancelsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.requestSession(t, sessionSpec(""))
	if _, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: res.SessionID}); err != nil {
		t.Fatal(err)
	}
	if s := e.session(t, res.SessionID); s.Status() != domain.StatusCancelled || s.StatusReason() != domain.ReasonUserRequested {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
}

func TestTerminateUnknownSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: unknownID})
	wantKind(t, err, domain.KindNotFound)
}

func TestCancelPendingSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.requestSession(t, sessionSpec(""))
	cancel := commands.CancelPendingSession{SessionID: res.SessionID, Reason: domain.ReasonPendingTimeout}
	out, err := e.handlers.CancelPendingSession.Handle(ctx, e.md, cancel)
	if err != nil || out.Position != e.lastPosition(t, domain.SessionStream(res.SessionID).String()) {
		t.Fatalf("%v %d", err, out.Position)
	}
	if s := e.session(t, res.SessionID); s.Status() != domain.StatusCancelled || s.StatusReason() != domain.ReasonPendingTimeout {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
	if _, err := e.handlers.CancelPendingSession.Handle(ctx, e.md, cancel); err != nil {
		t.Fatalf("cancelling twice: %v", err)
	}

	e.registerAgent(t, agentSpec("a1", 8))
	other := e.requestSession(t, sessionSpec(""))
	e.schedule(t, other, "a1", "", "")
	_, err = e.handlers.CancelPendingSession.Handle(ctx, e.md, commands.CancelPendingSession{SessionID: other.SessionID})
	wantKind(t, err, domain.KindConflict)
}

func TestUpdatePendingSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.requestSession(t, sessionSpec(""))
	cmd := commands.UpdatePendingSession{SessionID: res.SessionID, Reason: domain.ReasonNoAvailableInstances, Details: []string{"no agent has 1 cpu free"}, Tries: 1}
	if _, err := e.handlers.UpdatePendingSession.Handle(ctx, e.md, cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Tries = 2
	if _, err := e.handlers.UpdatePendingSession.Handle(ctx, e.md, cmd); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.SessionStream(res.SessionID).String()), domain.TypeSessionRequested, domain.TypeSessionPendingUpdated)
	if s := e.session(t, res.SessionID); s.StatusReason() != domain.ReasonNoAvailableInstances || len(s.PendingDetails()) != 1 {
		t.Fatalf("%s %v", s.StatusReason(), s.PendingDetails())
	}
}
