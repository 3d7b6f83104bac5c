package sessionlimits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/commands/sessionlimits"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/managertest"
)

var bg = context.Background()

const minute = time.Minute

type env struct {
	*managertest.Env
	tenant managertest.Tenant
	// checks receives the manager's latest check report (older ones are
	// dropped when the test does not read them).
	checks chan sessionlimits.Report
	// settings are the run-time settings' defaults the manager and the
	// command handlers start with.
	settings domain.SettingDefaults
}

// newEnv is the harness with a tenant, an agent and a scheduler placing
// sessions; the manager starts with start.
func newEnv(t *testing.T, spec managertest.TenantSpec, settings ...domain.SettingDefaults) *env {
	t.Helper()
	e := &env{checks: make(chan sessionlimits.Report, 1)}
	if len(settings) > 0 {
		e.settings = settings[0]
	}
	e.Env = managertest.New(t, managertest.WithSettings(e.settings))
	e.tenant = e.Tenant(spec)
	e.RegisterAgent(domain.AgentSpec{ID: "a1", Architecture: "x86_64", Capacity: domain.Slots{domain.SlotCPU: domain.Units(64), domain.SlotMem: domain.Units(64 << 30)}})
	s, err := scheduler.New(scheduler.Config{Interval: 20 * time.Millisecond, StartTimeout: scheduler.Never, Clock: e.Clock.Now, Logger: e.Log}, e.Store, scheduler.CommandsOf(e.Handlers))
	if err != nil {
		t.Fatal(err)
	}
	managertest.Go(t, "scheduler", s.Run)
	return e
}

func (e *env) start() {
	e.T.Helper()
	m, err := sessionlimits.New(sessionlimits.Config{
		Interval: 20 * time.Millisecond, Clock: e.Clock.Now, Logger: e.Log, Settings: e.settings,
		OnCheck: func(r sessionlimits.Report) {
			select {
			case e.checks <- r:
			default:
			}
		},
	}, e.Store, e.Handlers.TerminateSession)
	if err != nil {
		e.T.Fatal(err)
	}
	managertest.Go(e.T, "session limits", m.Run)
}

// running requests a session through accessKey and reports its kernel
// running once it is scheduled.
func (e *env) running(accessKey string, typ domain.SessionType) uuid.UUID {
	e.T.Helper()
	spec := e.tenant.Session(accessKey, 1, domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)})
	spec.Type = typ
	if typ == domain.SessionBatch {
		spec.Command = "python train.py"
	}
	id := e.Request(spec).SessionID
	s := e.AwaitStatus(id, domain.StatusScheduled)
	k := s.Kernels()[0]
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseRunning, ContainerID: "c-1",
	}); err != nil {
		e.T.Fatal(err)
	}
	e.AwaitStatus(id, domain.StatusRunning)
	return id
}

// access records a request about the session in the access log, as the
// HTTP layer does for reads.
func (e *env) access(id uuid.UUID, outcome audit.Outcome) {
	e.T.Helper()
	ev, err := eventstore.NewEvent(domain.TypeAccessBatchLogged, domain.AccessBatchLogged{Records: []audit.Record{
		{Time: e.Clock.Now(), Action: "GET /v1/auth/whoami", Outcome: audit.Success, Status: 200, RequestID: "r-other"},
		{Time: e.Clock.Now(), Action: "GET /v1/sessions/:id", EntityType: "session", EntityID: id.String(),
			Outcome: outcome, Status: 200, RequestID: "r-" + id.String()[:8]},
	}}, e.MD.Stored())
	if err != nil {
		e.T.Fatal(err)
	}
	res, err := e.Store.Append(bg, domain.AccessLogStream, eventstore.Any, ev)
	if err != nil {
		e.T.Fatal(err)
	}
	e.checkedAfter(res.Position)
}

// checkedAfter waits for a check of the manager whose view has folded
// position: from then on its checks know what was written before it.
func (e *env) checkedAfter(position uint64) {
	e.T.Helper()
	timeout := time.After(managertest.WaitTimeout)
	for {
		select {
		case r := <-e.checks:
			if r.Position >= position {
				return
			}
		case <-timeout:
			e.T.Fatalf("no check has folded position %d", position)
		}
	}
}

// endedBy waits until the session is TERMINATING for reason.
func (e *env) endedBy(id uuid.UUID, reason string) {
	e.T.Helper()
	s := e.AwaitStatus(id, domain.StatusTerminating)
	if s.StatusReason() != reason {
		e.T.Fatalf("session %s terminating with %s, want %s", id, s.StatusReason(), reason)
	}
}

func (e *env) still(id uuid.UUID, status domain.SessionStatus) {
	e.T.Helper()
	// A whole check that began after everything written so far (a
	// session the same check ended included) has run.
	head, err := e.Store.Head(bg)
	if err != nil {
		e.T.Fatal(err)
	}
	e.checkedAfter(head)
	if s := e.Session(id); s.Status() != status {
		e.T.Fatalf("session %s is %s (%s), want %s", id, s.Status(), s.StatusReason(), status)
	}
}

func unlimited(f func(*domain.KeypairPolicySpec)) domain.KeypairPolicySpec {
	p := domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}
	if f != nil {
		f(&p)
	}
	return p
}

// TestIdleTimeout: an interactive session nobody accesses ends
// idle-timeout idle_timeout after it started running; a successful access
// restarts the count, a denied one does not; a batch session never idles.
// Each "not yet" is observed in the same check that ends another session,
// so nothing waits on time passing.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, managertest.TenantSpec{MainPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.IdleTimeout = 600 }), OtherPolicy: unlimited(nil)})
	e.start()
	visited := e.running(e.tenant.Main, domain.SessionInteractive)
	forgotten := e.running(e.tenant.Main, domain.SessionInteractive)
	batch := e.running(e.tenant.Main, domain.SessionBatch)
	free := e.running(e.tenant.Other, domain.SessionInteractive) // no idle_timeout

	e.Clock.Advance(9 * minute)
	e.access(visited, audit.Success)
	e.access(forgotten, audit.Denied) // someone else was refused: no activity
	e.Clock.Advance(2 * minute)       // 11 minutes since running, 2 since the visit
	e.endedBy(forgotten, domain.ReasonIdleTimeout)
	e.still(visited, domain.StatusRunning)
	e.still(batch, domain.StatusRunning)

	e.Clock.Advance(9 * minute) // 11 minutes since the visit
	e.endedBy(visited, domain.ReasonIdleTimeout)
	e.still(batch, domain.StatusRunning)
	e.still(free, domain.StatusRunning)

	// The agent tears it down: the session ends with the reason.
	k := e.Session(visited).Kernels()[0]
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: visited, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseRemoved,
	}); err != nil {
		t.Fatal(err)
	}
	if s := e.AwaitStatus(visited, domain.StatusTerminated); s.StatusReason() != domain.ReasonIdleTimeout {
		t.Fatalf("terminated with %s", s.StatusReason())
	}
}

// TestDefaultIdleTimeout: an interactive session whose policy sets no
// idle_timeout ends at the run-time setting session.default_idle_timeout,
// its flag-seeded default first, then whatever an admin sets, applied to
// sessions already running; a policy's own idle_timeout wins over it.
func TestDefaultIdleTimeout(t *testing.T) {
	t.Parallel()
	// The handlers share the manager's default, as in a server: setting
	// 0 below is then a change the log records, not a no-op.
	e := newEnv(t, managertest.TenantSpec{MainPolicy: unlimited(nil), OtherPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.IdleTimeout = 3600 })},
		domain.SettingDefaults{domain.SettingSessionIdleTimeout: "600"})
	e.start()
	first := e.running(e.tenant.Main, domain.SessionInteractive)
	batch := e.running(e.tenant.Main, domain.SessionBatch)
	own := e.running(e.tenant.Other, domain.SessionInteractive) // its policy's 3600 s

	e.Clock.Advance(11 * minute)
	e.endedBy(first, domain.ReasonIdleTimeout)
	e.still(batch, domain.StatusRunning)
	e.still(own, domain.StatusRunning)

	setIdle := func(seconds string) {
		t.Helper()
		res, err := e.Handlers.ChangeSettings.Handle(bg, e.MD, commands.ChangeSettings{Actor: managertest.Superadmin,
			Changes: map[domain.SettingKey]string{domain.SettingSessionIdleTimeout: seconds}})
		if err != nil {
			t.Fatal(err)
		}
		e.checkedAfter(res.Position)
	}
	setIdle("0")
	second := e.running(e.tenant.Main, domain.SessionInteractive)
	e.Clock.Advance(50 * minute) // own: 61 minutes idle; second: 50
	e.endedBy(own, domain.ReasonIdleTimeout)
	e.still(second, domain.StatusRunning)

	setIdle("300")
	e.endedBy(second, domain.ReasonIdleTimeout)
	e.still(batch, domain.StatusRunning)
}

// TestSessionLifetime: a session ends session-lifetime
// max_session_lifetime after it was scheduled, whatever its type and
// however busy; a policy lowered later applies to running sessions.
func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, managertest.TenantSpec{
		MainPolicy:  unlimited(func(p *domain.KeypairPolicySpec) { p.MaxSessionLifetime = 3600 }),
		OtherPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.MaxSessionLifetime = 7200 }),
	})
	e.start()
	busy := e.running(e.tenant.Main, domain.SessionInteractive)
	batch := e.running(e.tenant.Main, domain.SessionBatch)
	long := e.running(e.tenant.Other, domain.SessionInteractive)

	e.Clock.Advance(59 * minute)
	e.access(busy, audit.Success)
	e.Clock.Advance(2 * minute)
	e.endedBy(busy, domain.ReasonSessionLifetime)
	e.endedBy(batch, domain.ReasonSessionLifetime)
	e.still(long, domain.StatusRunning)

	if _, err := e.Handlers.ModifyKeypairPolicy.Handle(bg, e.MD, commands.ModifyKeypairPolicy{
		Actor: managertest.Superadmin, Name: "other", Changes: domain.KeypairPolicyChanges{MaxSessionLifetime: ptr(int64(1800))},
	}); err != nil {
		t.Fatal(err)
	}
	e.endedBy(long, domain.ReasonSessionLifetime)
}

// TestIdleCountsFromTheManagersStart: a manager that starts late gives
// running sessions a full idle_timeout (their users could not reach a
// stopped API), but not a full lifetime.
func TestIdleCountsFromTheManagersStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, managertest.TenantSpec{
		MainPolicy:  unlimited(func(p *domain.KeypairPolicySpec) { p.IdleTimeout = 600 }),
		OtherPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.MaxSessionLifetime = 3600 }),
	})
	idle := e.running(e.tenant.Main, domain.SessionInteractive)
	old := e.running(e.tenant.Other, domain.SessionInteractive)
	e.Clock.Advance(2 * time.Hour)
	e.start()
	e.endedBy(old, domain.ReasonSessionLifetime)
	e.still(idle, domain.StatusRunning)
	e.Clock.Advance(11 * minute)
	e.endedBy(idle, domain.ReasonIdleTimeout)
}

func TestNewRefusesABadConfig(t *testing.T) {
	t.Parallel()
	_, err := sessionlimits.New(sessionlimits.Config{Interval: -1}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "interval") || !strings.Contains(err.Error(), "event log") || !strings.Contains(err.Error(), "TerminateSession handler") {
		t.Fatalf("err = %v, want every problem", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestIdleIsNotCountedWhileDisconnected: a session whose agent is silent
// cannot be reached by its user, so it is not ended for idleness while
// DISCONNECTED, and idleness counts afresh from its return.
func TestIdleIsNotCountedWhileDisconnected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, managertest.TenantSpec{MainPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.IdleTimeout = 600 }), OtherPolicy: unlimited(nil)})
	e.start()
	away := e.running(e.tenant.Main, domain.SessionInteractive)
	marker := e.running(e.tenant.Other, domain.SessionInteractive) // no idle_timeout: shows that a check ran
	k := e.Session(away).Kernels()[0]
	if _, err := e.Handlers.DisconnectAgent.Handle(bg, e.MD, commands.DisconnectAgent{AgentID: k.AgentID()}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(away, domain.StatusDisconnected)

	e.Clock.Advance(11 * minute)
	e.access(marker, audit.Success)
	e.still(away, domain.StatusDisconnected)

	if _, err := e.Handlers.ReconnectAgent.Handle(bg, e.MD, commands.ReconnectAgent{AgentID: k.AgentID(), Running: []uuid.UUID{k.ID()}}); err != nil {
		t.Fatal(err)
	}
	e.AwaitStatus(away, domain.StatusRunning)
	e.Clock.Advance(9 * minute) // 20 minutes since it first ran, 9 since its return
	e.access(marker, audit.Success)
	e.still(away, domain.StatusRunning)
	e.Clock.Advance(2 * minute)
	e.endedBy(away, domain.ReasonIdleTimeout)
}
