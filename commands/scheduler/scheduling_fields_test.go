package scheduler_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// requestWith asks for a one-kernel batch session with the scheduling
// fields of spec set by edit.
func (e *env) requestWith(edit func(*domain.SessionSpec)) commands.RequestSessionResult {
	e.T.Helper()
	spec := domain.SessionSpec{
		Name: "step", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python step.py", Resources: cpuMem(1, 1),
	}
	edit(&spec)
	return e.Request(spec)
}

// finish runs a scheduled session's kernels to exit code code, as its
// agent would report.
func (e *env) finish(id uuid.UUID, code int) {
	e.T.Helper()
	for _, k := range e.Session(id).Kernels() {
		for _, r := range []commands.ReportKernelStatus{
			{SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseRunning, ContainerID: "c-" + k.ID().String()},
			{SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseExited, ExitCode: code},
			{SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseRemoved},
		} {
			if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, r); err != nil {
				e.T.Fatal(err)
			}
		}
	}
}

// TestDependenciesStartsAtAndArchitecture: the loop feeds placement what
// session.requested carries: a session waits for its dependencies to
// succeed, for its starts_at, and for an agent of its architecture.
func TestDependenciesStartsAtAndArchitecture(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{})

	first := e.requestWith(func(*domain.SessionSpec) {})
	e.AwaitStatus(first.SessionID, domain.StatusScheduled)
	then := e.requestWith(func(s *domain.SessionSpec) { s.Dependencies = []uuid.UUID{first.SessionID} })
	later := e.requestWith(func(s *domain.SessionSpec) { s.StartsAt = e.Clock.Now().Add(time.Hour) })
	arm := e.requestWith(func(s *domain.SessionSpec) { s.Architecture = "aarch64" })

	for id, want := range map[uuid.UUID]string{
		then.SessionID:  "dependency " + first.SessionID.String() + " has not finished",
		later.SessionID: "starts_at " + e.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) + " is not reached",
		arm.SessionID:   "architecture: no schedulable agent of architecture aarch64",
	} {
		e.Await("the session waits with its reason", func() bool { return slices.Contains(e.Session(id).PendingDetails(), want) })
	}
	if s := e.Session(then.SessionID); s.StatusReason() != domain.ReasonPredicateChecks {
		t.Fatalf("reason %s", s.StatusReason())
	}

	e.finish(first.SessionID, 0)
	e.AwaitStatus(then.SessionID, domain.StatusScheduled)
	e.Clock.Advance(2 * time.Hour)
	e.AwaitStatus(later.SessionID, domain.StatusScheduled)
	arch := agentSpec("arm1", 4, 16, 0)
	arch.Architecture = "aarch64"
	e.RegisterAgent(arch)
	if s := e.AwaitStatus(arm.SessionID, domain.StatusScheduled); s.Kernels()[0].AgentID() != "arm1" {
		t.Fatalf("placed on %s", s.Kernels()[0].AgentID())
	}
}

// TestAFailedDependencyIsReported: a session whose dependency ended
// without success says so.
func TestAFailedDependencyIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{})

	first := e.requestWith(func(*domain.SessionSpec) {})
	e.AwaitStatus(first.SessionID, domain.StatusScheduled)
	then := e.requestWith(func(s *domain.SessionSpec) { s.Dependencies = []uuid.UUID{first.SessionID} })
	e.finish(first.SessionID, 3)
	want := "dependency " + first.SessionID.String() + " did not finish successfully"
	e.Await("the session names its failed dependency", func() bool { return slices.Contains(e.Session(then.SessionID).PendingDetails(), want) })
}
