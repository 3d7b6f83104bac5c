package sessions_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

var ctx = context.Background()

// env is a backend with command handlers and the sessions read model
// projected live.
type env struct {
	b  *projectiontest.Backend
	h  *commands.Handlers
	rm *sessions.ReadModel
	r  *projectiontest.Running
}

func newEnv(t *testing.T, b *projectiontest.Backend, opts projections.Options) *env {
	t.Helper()
	rm := sessions.New(b.DB)
	// What the server does before serving queries.
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	return &env{b: b, h: projectiontest.Handlers(t, b), rm: rm, r: projectiontest.Start(t, b.DB, b, rm, opts)}
}

// get waits for position, then reads the session.
func (e *env) get(t *testing.T, position uint64, id uuid.UUID) sessions.Session {
	t.Helper()
	e.r.WaitFor(t, position)
	s, err := e.rm.GetSession(ctx, id)
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	return s
}

func (e *env) request(t *testing.T, spec domain.SessionSpec) commands.RequestSessionResult {
	t.Helper()
	res, err := e.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *env) report(t *testing.T, r commands.ReportKernelStatus) uint64 {
	t.Helper()
	out, err := e.h.ReportKernelStatus.Handle(ctx, projectiontest.MD, r)
	if err != nil {
		t.Fatalf("report %s: %v", r.Phase, err)
	}
	return out.Position
}

// aggregate folds the session's stream: what the read model must mirror.
func (e *env) aggregate(t *testing.T, id uuid.UUID) *domain.Session {
	t.Helper()
	recs, err := e.b.Store.ReadStream(ctx, domain.SessionStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatal(err)
	}
	evs := make([]domain.RecordedEvent, len(recs))
	for i, r := range recs {
		d, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = domain.RecordedEvent{Revision: r.Revision, Event: d}
	}
	s, err := domain.RehydrateSession(evs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkMirrors compares a read-model session with the aggregate folded
// from the same events.
func checkMirrors(t *testing.T, got sessions.Session, want *domain.Session) {
	t.Helper()
	sameTime := func(field string, got *time.Time, want time.Time) {
		t.Helper()
		switch {
		case want.IsZero() && got != nil:
			t.Errorf("%s = %v, want none", field, *got)
		case !want.IsZero() && (got == nil || !got.Equal(want)):
			t.Errorf("%s = %v, want %v", field, got, want)
		}
	}
	if got.ID != want.ID() || got.Name != want.Name() || got.Owner != want.Owner() || got.Domain != want.Domain() ||
		got.Project != want.Project() || got.ResourceGroup != want.ResourceGroup() || got.Type != want.Type() ||
		got.Image != want.Image() || got.Command != want.Command() || got.Priority != want.Priority() ||
		got.ClusterMode != want.ClusterMode() {
		t.Errorf("request fields %+v do not match the aggregate", got)
	}
	if got.Status != want.Status() || got.StatusReason != want.StatusReason() || got.Result != want.Result() {
		t.Errorf("status %s (%s, result %q), want %s (%s, result %q)", got.Status, got.StatusReason, got.Result,
			want.Status(), want.StatusReason(), want.Result())
	}
	if !slices.Equal(got.PendingDetails, want.PendingDetails()) || (want.Status() == domain.StatusPending && got.PendingTries != want.PendingTries()) {
		t.Errorf("pending %v/%d, want %v/%d", got.PendingDetails, got.PendingTries, want.PendingDetails(), want.PendingTries())
	}
	if code, ok := want.ExitCode(); ok != (got.ExitCode != nil) || (ok && *got.ExitCode != code) {
		t.Errorf("exit code %v, want %d (%v)", got.ExitCode, code, ok)
	}
	if !got.CreatedAt.Equal(want.RequestedAt()) {
		t.Errorf("created_at %v, want %v", got.CreatedAt, want.RequestedAt())
	}
	sameTime("scheduled_at", got.ScheduledAt, want.ScheduledAt())
	sameTime("started_at", got.StartedAt, want.StartedAt())
	sameTime("terminated_at", got.TerminatedAt, want.TerminatedAt())

	kernels := want.Kernels()
	if len(got.Kernels) != len(kernels) || got.ClusterSize != len(kernels) {
		t.Fatalf("%d kernels (cluster size %d), want %d", len(got.Kernels), got.ClusterSize, len(kernels))
	}
	total := domain.Slots{}
	agents := []string{}
	var devices []sessions.DeviceAssignment
	for i, k := range kernels {
		g := got.Kernels[i]
		total = total.Add(k.Requested())
		if k.AgentID() != "" && !slices.Contains(agents, k.AgentID()) {
			agents = append(agents, k.AgentID())
		}
		for _, d := range k.Devices() {
			devices = append(devices, sessions.DeviceAssignment{KernelID: k.ID(), AgentID: k.AgentID(), DeviceID: d.DeviceID, Amount: d.Amount.String()})
		}
		if g.ID != k.ID() || g.Index != i || g.Role != k.Role() || g.AgentID != k.AgentID() || g.ContainerID != k.ContainerID() ||
			g.Status != k.Status() || g.StatusReason != k.StatusReason() || !slices.Equal(g.Devices, k.Devices()) ||
			!sameSlots(g.RequestedSlots, k.Requested()) || g.ServicePorts == nil || !slices.Equal(g.ServicePorts, k.ServicePorts()) {
			t.Errorf("kernel %d = %+v, want %+v", i, g, k)
		}
		if p, ok := k.PullProgress(); ok != (g.PullProgress != nil) || (ok && *g.PullProgress != p) {
			t.Errorf("kernel %d pull progress %v, want %v (%v)", i, g.PullProgress, p, ok)
		}
		if ready := k.AppsReady(); g.AppsReady == nil || !slices.EqualFunc(g.AppsReady, ready, func(a, b domain.AppReady) bool {
			return a.Name == b.Name && a.At.Equal(b.At)
		}) {
			t.Errorf("kernel %d apps ready %v, want %v", i, g.AppsReady, ready)
		}
		if code, ok := k.ExitCode(); ok != (g.ExitCode != nil) || (ok && *g.ExitCode != code) {
			t.Errorf("kernel %d exit code %v, want %d (%v)", i, g.ExitCode, code, ok)
		}
	}
	slices.Sort(agents)
	if !slices.Equal(got.AgentIDs, agents) {
		t.Errorf("agent ids %v, want %v", got.AgentIDs, agents)
	}
	if !slices.Equal(got.Devices, devices) && !(len(got.Devices) == 0 && len(devices) == 0) {
		t.Errorf("devices %v, want %v", got.Devices, devices)
	}
	if !sameSlots(got.RequestedSlots, total) {
		t.Errorf("requested slots %v, want %v", got.RequestedSlots, total)
	}
}

func sameSlots(a, b domain.Slots) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// dumpAll dumps the read model's tables, for comparing a rebuild.
func dumpAll(t *testing.T, db *projections.DB) []string {
	t.Helper()
	out := projectiontest.Dump(t, db, "sessions", 31, "id")
	return append(out, projectiontest.Dump(t, db, "kernels", 16, "id")...)
}

// used appends an access record about the session, as the access log's
// Writer does, and returns its position.
func (e *env) used(t *testing.T, id uuid.UUID, at time.Time, outcome audit.Outcome) uint64 {
	t.Helper()
	ev, err := eventstore.NewEvent(domain.TypeAccessBatchLogged, domain.AccessBatchLogged{Records: []audit.Record{
		{Time: at, Action: "GET /v1/auth/whoami", Outcome: audit.Success, Status: 200, RequestID: uuid.NewString()},
		{Time: at, Action: "app.traffic jupyter", EntityType: "session", EntityID: id.String(), Outcome: outcome, Status: 200, RequestID: uuid.NewString()},
	}}, projectiontest.MD.Stored())
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.b.Store.Append(ctx, domain.AccessLogStream, eventstore.Any, ev)
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}
