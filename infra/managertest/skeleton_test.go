package managertest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/dispatch/forwarder"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/managertest"
)

// scriptedAgent plays a node agent on the real bus: it registers, runs
// every kernel it is asked to create (its command "exit N" exits with N,
// anything else runs until destroyed) and reports each kernel it destroys
// as removed.
func scriptedAgent(e *managertest.Env, b *bus.Bus, id string) {
	e.T.Helper()
	received := e.Listen(b, id)
	managertest.Go(e.T, "agent "+id, func(ctx context.Context) error {
		report := func(m protocol.Message) error {
			msg, err := protocol.NewMessage(m)
			if err != nil {
				return err
			}
			topic, err := bus.ReportTopic(id)
			if err != nil {
				return err
			}
			if err := b.Publish(ctx, topic, msg); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		}
		for {
			var r managertest.Received
			select {
			case <-ctx.Done():
				return nil
			case r = <-received:
			}
			now := time.Now().UTC()
			switch m := r.Message.(type) {
			case protocol.KernelCreate:
				st := protocol.KernelStatus{SessionID: m.SessionID, KernelID: m.KernelID, AgentID: id, ObservedAt: now}
				for _, phase := range []domain.KernelPhase{domain.PhasePreparing, domain.PhaseCreating, domain.PhaseRunning} {
					st.Phase, st.ContainerID = phase, "c-"+m.KernelID.String()[:8]
					if err := report(st); err != nil {
						return err
					}
				}
				if len(m.Command) == 3 && strings.HasPrefix(m.Command[2], "exit ") {
					st.Phase, st.ExitCode = domain.PhaseExited, int(m.Command[2][5]-'0')
					if err := report(st); err != nil {
						return err
					}
				}
			case protocol.KernelDestroy:
				if err := report(protocol.KernelStatus{SessionID: m.SessionID, KernelID: m.KernelID, AgentID: id, Phase: domain.PhaseRemoved, ObservedAt: now}); err != nil {
					return err
				}
			}
		}
	})
	spec := protocol.AgentRegister{
		AgentID: id, Architecture: "x86_64",
		Capacity: domain.Slots{domain.SlotCPU: domain.Units(8), domain.SlotMem: domain.Units(32 << 30),
			domain.SlotCUDADevice: domain.Units(1), domain.SlotCUDAShares: domain.Units(1)},
		Devices:   []domain.Device{{ID: "GPU-" + id, Kind: domain.SlotCUDADevice}},
		StartedAt: managertest.T0, At: managertest.T0,
	}
	e.Report(b, spec)
}

// TestWalkingSkeleton runs the manager's three process managers together
// over the real store and bus with a scripted agent: a batch session is
// placed, created, runs and fails with its exit code; an interactive one
// runs until its user ends it.
func TestWalkingSkeleton(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()

	sched, err := scheduler.New(scheduler.Config{Interval: 50 * time.Millisecond, Clock: e.Clock.Now, Logger: e.Log}, e.Store, scheduler.CommandsOf(e.Handlers))
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := forwarder.New(forwarder.Config{Logger: e.Log}, e.Store, b, forwarder.NewFileCheckpoint(filepath.Join(t.TempDir(), "fwd")))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := reports.New(reports.Config{Clock: e.Clock.Now, Logger: e.Log}, b, e.Store, e.Handlers)
	if err != nil {
		t.Fatal(err)
	}
	managertest.Go(t, "scheduler", sched.Run)
	managertest.Go(t, "forwarder", fwd.Run)
	managertest.Go(t, "reports", rep.Run)
	scriptedAgent(e, b, "node-1")
	e.Await("the agent registered", func() bool { return e.Agent("node-1").Exists() })

	spec := domain.SessionSpec{
		Name: "job", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionBatch, Image: "busybox", Command: "exit 3",
		Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30), domain.SlotCUDAShares: domain.Units(1) / 4},
	}
	batch := e.Request(spec)
	s := e.AwaitStatus(batch.SessionID, domain.StatusTerminated)
	if code, _ := s.ExitCode(); code != 3 || s.StatusReason() != domain.ReasonTaskFailed {
		t.Fatalf("batch: exit %d, reason %s", code, s.StatusReason())
	}

	spec.Type, spec.Command = domain.SessionInteractive, ""
	notebook := e.Request(spec)
	e.AwaitStatus(notebook.SessionID, domain.StatusRunning)
	if _, err := e.Handlers.TerminateSession.Handle(context.Background(), e.MD, commands.TerminateSession{SessionID: notebook.SessionID}); err != nil {
		t.Fatal(err)
	}
	s = e.AwaitStatus(notebook.SessionID, domain.StatusTerminated)
	if s.StatusReason() != domain.ReasonUserRequested {
		t.Fatalf("notebook: reason %s", s.StatusReason())
	}
	e.Await("everything is released", func() bool { return e.Agent("node-1").Occupied().IsZero() })
}
