package reports_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/managertest"
)

var bg = context.Background()

func register(id string) protocol.AgentRegister {
	return protocol.AgentRegister{
		AgentID: id, Architecture: "x86_64",
		Capacity:  domain.Slots{domain.SlotCPU: domain.Units(8), domain.SlotMem: domain.Units(64 << 30)},
		StartedAt: managertest.T0, At: managertest.T0,
	}
}

func heartbeat(id string) protocol.AgentHeartbeat {
	return protocol.AgentHeartbeat{AgentID: id, IntervalMillis: 10_000, StartedAt: managertest.T0, At: managertest.T0}
}

func status(res commands.RequestSessionResult, agent string, phase domain.KernelPhase) protocol.KernelStatus {
	return protocol.KernelStatus{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: agent, Phase: phase, ObservedAt: managertest.T0}
}

// start runs a consumer of b's reports.
func start(e *managertest.Env, b *bus.Bus, cfg reports.Config) {
	e.T.Helper()
	cfg.Clock, cfg.Logger = e.Clock.Now, e.Log
	c, err := reports.New(cfg, b, e.Store, e.Handlers)
	if err != nil {
		e.T.Fatal(err)
	}
	managertest.Go(e.T, "reports", c.Run)
}

// scheduled requests a session and places it on agent.
func scheduled(e *managertest.Env, agent string) commands.RequestSessionResult {
	e.T.Helper()
	res := e.Request(domain.SessionSpec{
		Name: "job", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionBatch, Image: "busybox", Command: "exit 3",
		Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)},
	})
	if _, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID,
		Kernels: []domain.KernelPlacement{{KernelID: res.KernelIDs[0], AgentID: agent}}}); err != nil {
		e.T.Fatal(err)
	}
	return res
}

func TestRegisterIsRecordedAndAnsweredWithASync(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	received := e.Listen(b, "a1")
	start(e, b, reports.Config{})

	id := e.Report(b, register("a1"))
	got := e.Next(received)
	sync, ok := got.Message.(protocol.KernelSync)
	if !ok || got.ID != protocol.DerivedID(uuid.MustParse(id), protocol.TypeKernelSync).String() ||
		sync.AgentID != "a1" || len(sync.Kernels) != 0 || sync.AsOfRevision != 0 {
		t.Fatalf("got %s %+v", got.ID, got.Message)
	}
	if a := e.Agent("a1"); !a.Exists() || a.Capacity()[domain.SlotCPU] != domain.Units(8) {
		t.Fatalf("agent %+v", a)
	}

	// Registering again lists what is allocated meanwhile.
	res := scheduled(e, "a1")
	e.Report(b, register("a1"))
	got = e.Next(received)
	if sync := got.Message.(protocol.KernelSync); len(sync.Kernels) != 1 || sync.Kernels[0] != res.KernelIDs[0] ||
		sync.AsOfRevision != e.Agent("a1").Revision() {
		t.Fatalf("sync %+v", sync)
	}
	if n := e.Count(domain.AgentStream("a1").String(), domain.TypeAgentRegistered); n != 1 {
		t.Fatalf("%d registrations recorded, want 1", n)
	}
}

func TestKernelReportsDriveTheSession(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	start(e, b, reports.Config{})
	e.RegisterAgent(register("a1").Spec())
	res := scheduled(e, "a1")

	running := status(res, "a1", domain.PhaseRunning)
	running.ContainerID = "c0ffee"
	e.Report(b, running)
	e.AwaitStatus(res.SessionID, domain.StatusRunning)

	exited := status(res, "a1", domain.PhaseExited)
	exited.ExitCode = 3
	e.Report(b, exited)
	e.Report(b, exited) // a repeat is no news
	s := e.AwaitStatus(res.SessionID, domain.StatusTerminated)
	if code, ok := s.ExitCode(); !ok || code != 3 || s.StatusReason() != domain.ReasonTaskFailed || s.Result() != domain.ResultFailure {
		t.Fatalf("exit %d %v, reason %s, result %s", code, ok, s.StatusReason(), s.Result())
	}
	e.Await("the allocation is released", func() bool { return e.Agent("a1").Occupied().IsZero() })
	if n := e.Count(domain.SessionStream(res.SessionID).String(), domain.TypeKernelExited); n != 1 {
		t.Fatalf("%d kernel.exited events, want 1", n)
	}
}

// TestAnEarlyReportWaitsForTheSchedule: an agent answers kernel.create
// (sent on agent.allocated) before session.scheduled is recorded; the
// report is retried, not dropped.
func TestAnEarlyReportWaitsForTheSchedule(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(register("a1").Spec())
	res := e.Request(domain.SessionSpec{
		Name: "job", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default", Type: domain.SessionInteractive, Image: "busybox",
		Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)},
	})
	start(e, b, reports.Config{})
	running := status(res, "a1", domain.PhaseRunning)
	running.ContainerID = "c0ffee"
	e.Report(b, running)
	// Reports are handled in order (a retried one comes back behind later
	// ones): once a later register is recorded, the report was tried.
	e.Report(b, register("a2"))
	e.Await("a2 registered", func() bool { return e.Agent("a2").Exists() })
	if s := e.Session(res.SessionID); s.Status() != domain.StatusPending {
		t.Fatalf("status %s", s.Status())
	}

	if _, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID,
		Kernels: []domain.KernelPlacement{{KernelID: res.KernelIDs[0], AgentID: "a1"}}}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(res.SessionID, domain.StatusRunning)
}

// TestASilentAgentIsDisconnectedThenLost: an agent silent past the
// heartbeat timeout is disconnected, its session DISCONNECTED with its
// allocation kept; a heartbeat listing the kernel brings both back, the
// session RUNNING in the same container. Silent past the lost timeout, it
// is given up on: the session in ERROR, the allocation released, and the
// kernel.sync answering its return no longer lists the kernel (the agent
// removes it).
func TestASilentAgentIsDisconnectedThenLost(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	received := e.Listen(b, "a1")
	start(e, b, reports.Config{HeartbeatTimeout: 30 * time.Second, AgentLostTimeout: 10 * time.Minute, CheckInterval: 10 * time.Millisecond})
	// a1 runs a session and keeps beating for a while; canary never does.
	e.Report(b, register("a1"))
	e.Report(b, register("canary"))
	e.Await("both registered", func() bool { return e.Agent("a1").Exists() && e.Agent("canary").Exists() })
	e.Next(received) // the sync answering the register
	res := scheduled(e, "a1")
	running := status(res, "a1", domain.PhaseRunning)
	running.ContainerID = "c0ffee"
	e.Report(b, running)
	e.AwaitStatus(res.SessionID, domain.StatusRunning)
	e.Clock.Advance(20 * time.Second)
	e.Report(b, heartbeat("a1"))
	e.Report(b, register("marker")) // handled after the heartbeat
	e.Await("marker registered", func() bool { return e.Agent("marker").Exists() })
	// 35s: the canary, silent since 0s, is disconnected; a1, heard at 20s, is not.
	e.Clock.Advance(15 * time.Second)
	e.Await("canary disconnected", func() bool { return e.Agent("canary").Status() == domain.AgentStatusDisconnected })
	if a := e.Agent("a1"); a.Status() != domain.AgentStatusAlive || e.Session(res.SessionID).Status() != domain.StatusRunning {
		t.Fatalf("a1 %s, session %s: a heartbeat did not count", a.Status(), e.Session(res.SessionID).Status())
	}
	// 51s: a1 silent for 31s is disconnected, its session too; nothing is
	// released.
	e.Clock.Advance(16 * time.Second)
	s := e.AwaitStatus(res.SessionID, domain.StatusDisconnected)
	if s.StatusReason() != domain.ReasonAgentDisconnected {
		t.Fatalf("reason %s", s.StatusReason())
	}
	e.Await("a1 disconnected", func() bool { return e.Agent("a1").Status() == domain.AgentStatusDisconnected })
	if n := e.Count(domain.AgentStream("a1").String(), domain.TypeAgentReleased); n != 0 || e.Agent("a1").Occupied().IsZero() {
		t.Fatalf("%d releases, occupied %v: a disconnected agent keeps its allocations", n, e.Agent("a1").Occupied())
	}

	// 111s: it beats again, running the kernel: back, same container.
	e.Clock.Advance(60 * time.Second)
	hb := heartbeat("a1")
	hb.Running = res.KernelIDs
	e.Report(b, hb)
	s = e.AwaitStatus(res.SessionID, domain.StatusRunning)
	if k, _ := s.Kernel(res.KernelIDs[0]); s.StatusReason() != domain.ReasonAgentReconnected || k.ContainerID() != "c0ffee" {
		t.Fatalf("reason %s, container %s", s.StatusReason(), k.ContainerID())
	}
	e.Await("a1 reconnected", func() bool { return e.Agent("a1").Status() == domain.AgentStatusAlive })

	// Silent again: disconnected after 30s, lost 10 minutes after it was
	// last heard from.
	e.Clock.Advance(31 * time.Second)
	e.AwaitStatus(res.SessionID, domain.StatusDisconnected)
	e.Clock.Advance(10 * time.Minute)
	s = e.AwaitStatus(res.SessionID, domain.StatusError)
	if s.StatusReason() != domain.ReasonAgentLost {
		t.Fatalf("reason %s", s.StatusReason())
	}
	e.Await("a1 lost", func() bool { return e.Agent("a1").Status() == domain.AgentStatusLost })
	e.Await("canary lost", func() bool { return e.Agent("canary").Status() == domain.AgentStatusLost })
	if a := e.Agent("a1"); !a.Occupied().IsZero() {
		t.Fatalf("occupied %v", a.Occupied())
	}
	var released []domain.AgentReleased
	for _, ev := range e.Decoded(domain.AgentStream("a1").String()) {
		if r, ok := ev.Event.(domain.AgentReleased); ok {
			released = append(released, r)
		}
	}
	if len(released) != 1 || released[0].KernelID != res.KernelIDs[0] || released[0].Reason != domain.ReasonAgentLost {
		t.Fatalf("released %+v", released)
	}
	// It comes back by registering again; the sync lists nothing, so the
	// agent removes the kernel the manager gave up on.
	e.Report(b, register("a1"))
	e.Await("a1 rejoined", func() bool { return e.Agent("a1").Status() == domain.AgentStatusAlive })
	if sync, ok := e.Next(received).Message.(protocol.KernelSync); !ok || len(sync.Kernels) != 0 {
		t.Fatalf("sync %+v: want no kernel listed", sync)
	}
}

// TestAHeartbeatFromALostAgentIsNotAReturn: a lost agent comes back only
// by registering; its heartbeat changes nothing.
func TestAHeartbeatFromALostAgentIsNotAReturn(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	start(e, b, reports.Config{HeartbeatTimeout: 30 * time.Second, AgentLostTimeout: time.Minute, CheckInterval: 10 * time.Millisecond})
	e.Report(b, register("a1"))
	e.Await("a1 registered", func() bool { return e.Agent("a1").Exists() })
	e.Clock.Advance(31 * time.Second)
	e.Await("a1 disconnected", func() bool { return e.Agent("a1").Status() == domain.AgentStatusDisconnected })
	e.Clock.Advance(31 * time.Second)
	e.Await("a1 lost", func() bool { return e.Agent("a1").Status() == domain.AgentStatusLost })
	e.Report(b, heartbeat("a1"))
	e.Report(b, register("marker")) // handled after the heartbeat
	e.Await("marker registered", func() bool { return e.Agent("marker").Exists() })
	if a := e.Agent("a1"); a.Status() != domain.AgentStatusLost {
		t.Fatalf("a1 %s", a.Status())
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (reports.Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	bad := reports.Config{HeartbeatTimeout: time.Minute, AgentLostTimeout: 30 * time.Second}
	if err := bad.Validate(); err == nil {
		t.Fatal("a lost timeout shorter than the heartbeat timeout passed")
	}
	if err := (reports.Config{HeartbeatTimeout: -1, AgentLostTimeout: -1}).Validate(); err == nil {
		t.Fatal("negative timeouts passed")
	}
}

func TestUndecodableReportsAreDropped(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	start(e, b, reports.Config{})
	if err := b.Publish(bg, mustReportTopic(t, "a1"), message.NewMessage(uuid.NewString(), []byte(`{"type":"agent.reboot","version":1}`))); err != nil {
		t.Fatal(err)
	}
	// The consumer moves on to the next report.
	e.Report(b, register("a1"))
	e.Await("a1 registered", func() bool { return e.Agent("a1").Exists() })
}

func mustReportTopic(t *testing.T, agentID string) string {
	t.Helper()
	topic, err := bus.ReportTopic(agentID)
	if err != nil {
		t.Fatal(err)
	}
	return topic
}

// TestAReportForAnotherAgentIsDropped: agent a2 (its credentials publish
// only on cairn.reports.a2) claims that a1's kernel exited; the consumer
// drops it, and a1's own report decides.
func TestAReportForAnotherAgentIsDropped(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	start(e, b, reports.Config{})
	e.RegisterAgent(register("a1").Spec())
	e.RegisterAgent(register("a2").Spec())
	res := scheduled(e, "a1")

	running := status(res, "a1", domain.PhaseRunning)
	running.ContainerID = "c0ffee"
	e.Report(b, running)
	e.AwaitStatus(res.SessionID, domain.StatusRunning)

	forged := status(res, "a1", domain.PhaseExited)
	forged.ExitCode = 99
	e.ReportAs(b, "a2", forged)
	forgedRegister := register("a1")
	forgedRegister.Capacity = domain.Slots{domain.SlotCPU: domain.Units(4096), domain.SlotMem: domain.Units(1 << 50)}
	e.ReportAs(b, "a2", forgedRegister)

	exited := status(res, "a1", domain.PhaseExited)
	exited.ExitCode = 3
	e.Report(b, exited)
	s := e.AwaitStatus(res.SessionID, domain.StatusTerminated)
	if code, ok := s.ExitCode(); !ok || code != 3 {
		t.Fatalf("exit code %d %v: the forged report (99) counted", code, ok)
	}
	if got := e.Agent("a1").Capacity(); !got.FitsIn(register("a1").Capacity) {
		t.Fatalf("a2 re-registered a1 with capacity %v", got)
	}
}

// A kernel.activity becomes one audit record per signal about its
// session, what the session-limits manager counts as use; one from an
// agent that does not run that kernel records nothing.
func TestKernelActivityIsRecordedAboutTheSession(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	records := make(chan audit.Record, 16)
	start(e, b, reports.Config{Record: func(_ context.Context, r audit.Record) error {
		records <- r
		return nil
	}})
	e.RegisterAgent(register("a1").Spec())
	e.RegisterAgent(register("a2").Spec())
	run := func(agent string) commands.RequestSessionResult {
		res := scheduled(e, agent)
		running := status(res, agent, domain.PhaseRunning)
		running.ContainerID = "c0ffee"
		e.Report(b, running)
		e.AwaitStatus(res.SessionID, domain.StatusRunning)
		return res
	}
	on1, on2 := run("a1"), run("a2")
	activity := func(res commands.RequestSessionResult, agent string, signals ...string) protocol.KernelActivity {
		return protocol.KernelActivity{SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: agent, Signals: signals, ObservedAt: managertest.T0}
	}
	next := func() audit.Record {
		t.Helper()
		select {
		case r := <-records:
			return r
		case <-time.After(managertest.WaitTimeout):
			t.Fatal("no audit record")
		}
		return audit.Record{}
	}

	id := e.Report(b, activity(on1, "a1", protocol.SignalGPU, protocol.SignalTerminal))
	for _, signal := range []string{protocol.SignalGPU, protocol.SignalTerminal} {
		r := next()
		if r.Action != "kernel.activity "+signal || r.EntityType != "session" || r.EntityID != on1.SessionID.String() ||
			r.Outcome != audit.Success || r.UserID != "agent:a1" || !r.Time.Equal(e.Clock.Now()) ||
			r.RequestID != protocol.DerivedID(uuid.MustParse(id), signal).String() {
			t.Fatalf("record %+v", r)
		}
	}
	// a2 speaks of a1's kernel (on its own topic, so the bus lets it):
	// dropped. Its report about its own kernel, after it, is recorded.
	e.Report(b, activity(on1, "a2", protocol.SignalNotebook))
	e.Report(b, activity(on2, "a2", protocol.SignalNotebook))
	if r := next(); r.EntityID != on2.SessionID.String() || r.Action != "kernel.activity notebook" {
		t.Fatalf("record %+v, want a2's own session's", r)
	}
	select {
	case r := <-records:
		t.Fatalf("unexpected record %+v", r)
	default:
	}
}
