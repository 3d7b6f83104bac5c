package readapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/projections/agents"
	auditrm "github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/tenancy"
	"github.com/cairnhq/cairn/projections/usage"
)

// DefaultMaxWait bounds a wait_for_position when Deps.MaxWait is zero; it
// is also cairn dev's --max-wait default.
const DefaultMaxWait = 30 * time.Second

// Deps is what the query routes work with.
type Deps struct {
	Sessions *sessions.ReadModel
	Agents   *agents.ReadModel
	Audit    *auditrm.ReadModel
	// Waiter waits until the read models reflect a position (the
	// projectors; WaitAll combines several).
	Waiter Waiter
	// Logs reads kernel logs (the in-process agent, or a remote one).
	Logs LogSource
	// Streams bounds the log streams (follow, download), which outlive
	// their request's handler: they end when it ends (the server's
	// shutdown). Nil: they end only with their log or client.
	Streams context.Context
	// Tenancy is the tenancy read model: the admin queries, and what the
	// scope lookups read (users, keypairs, projects).
	Tenancy *tenancy.ReadModel
	// MaxWait caps a wait_for_position (default DefaultMaxWait).
	MaxWait time.Duration
	// Clock reads the time (default time.Now).
	Clock func() time.Time
	// VFolders serve the virtual folder queries (vfolders.go); without
	// them those routes are not mounted.
	VFolders VFolderDeps
	// Usage serves GET /v1/usage (usage per day); without it the route is
	// not mounted.
	Usage *usage.ReadModel
	// Occupancy is the quota occupancy read model: with it the
	// explanations of waiting sessions are served (GET
	// /v1/sessions/{id}/pending, GET /v1/scheduler/queue), computed with
	// Queue, the scheduler's own queue settings (scheduler.Config.Queue).
	Occupancy *occupancy.ReadModel
	Queue     placement.ResourceGroup
	// Events reads a session's stream: with it GET
	// /v1/sessions/{id}/timeline is served.
	Events EventReader
	// AuditHeads is the audit head signer: GET /v1/audit/heads/latest
	// answers its last signed head (404 without it).
	AuditHeads AuditHeads

	// Log is the event store: its head and its tail, for the change
	// streams (GET /v1/events) and the second look of a lookup that found
	// nothing (recheck.go).
	Log EventLog
	// RecheckWait bounds that second look's wait (default
	// DefaultRecheckWait).
	RecheckWait time.Duration
	// Heartbeat, StreamLifetime, StreamBuffer and StreamCatchUp shape the
	// change streams (defaults DefaultHeartbeat, DefaultStreamLifetime,
	// DefaultStreamBuffer, DefaultStreamCatchUp).
	Heartbeat      time.Duration
	StreamLifetime time.Duration
	StreamBuffer   int
	StreamCatchUp  int
	// Logger logs what the change feed drops (default slog's).
	Logger *slog.Logger
	// Maintenance serves the system description and the maintenance
	// jobs' progress (maintenance.go); without it those routes are not
	// mounted.
	Maintenance Maintenance
	// Settings serve the run-time settings (settings_read.go); without
	// them those routes are not mounted.
	Settings SettingsDeps
}

// EventReader reads one stream of the event store (eventstore.Store's
// ReadStream): the session timeline's source.
type EventReader interface {
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

// Waiter blocks until the read side has reached a position (see
// projections.Projector.WaitFor), or returns an error when it cannot.
type Waiter interface {
	WaitFor(ctx context.Context, position uint64) error
}

// LogSource reads a kernel's logs (stdout and stderr, most recent last,
// the last tail lines when tail > 0) from the agent that runs or ran it.
// Errors should be domain errors (a kernel without logs is KindNotFound,
// an unreachable agent KindUnavailable).
type LogSource interface {
	KernelLogs(ctx context.Context, agentID, kernelID string, tail int) ([]byte, error)
	// OpenKernelLog starts reading the range r of a kernel's log (see
	// LogRange) and returns once the log was found, or with the error
	// that says why not; the stream's bytes follow until its end. The
	// stream ends when ctx does; Close ends it early.
	OpenKernelLog(ctx context.Context, agentID, kernelID string, r LogRange) (LogStream, error)
}

// WithDefaults returns d with MaxWait and Clock set when they were not.
func (d Deps) WithDefaults() Deps {
	if d.MaxWait == 0 {
		d.MaxWait = DefaultMaxWait
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.RecheckWait == 0 {
		d.RecheckWait = DefaultRecheckWait
	}
	if d.Heartbeat == 0 {
		d.Heartbeat = DefaultHeartbeat
	}
	if d.StreamLifetime == 0 {
		d.StreamLifetime = DefaultStreamLifetime
	}
	if d.StreamBuffer == 0 {
		d.StreamBuffer = DefaultStreamBuffer
	}
	if d.StreamCatchUp == 0 {
		d.StreamCatchUp = DefaultStreamCatchUp
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}

// Validate reports every missing dependency at once.
func (d Deps) Validate() error {
	var errs []error
	for _, dep := range []struct {
		name    string
		missing bool
	}{
		{"Sessions", d.Sessions == nil},
		{"Agents", d.Agents == nil},
		{"Audit", d.Audit == nil},
		{"Waiter", d.Waiter == nil},
		{"Logs", d.Logs == nil},
		{"Tenancy", d.Tenancy == nil},
		{"Log", d.Log == nil},
	} {
		if dep.missing {
			errs = append(errs, fmt.Errorf("readapi: no %s", dep.name))
		}
	}
	if d.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("readapi: max wait %v must not be negative", d.MaxWait))
	}
	if d.RecheckWait < 0 || d.Heartbeat < 0 || d.StreamLifetime < 0 || d.StreamBuffer < 0 || d.StreamCatchUp < 0 {
		errs = append(errs, fmt.Errorf("readapi: the recheck wait, heartbeat and stream lifetime, buffer and catch-up must not be negative"))
	}
	return errors.Join(errs...)
}

// API is the query side: it serves the query routes (Mount), and the
// command endpoints (infra/commandapi) read through its lookups (what the
// caller may see, wait_for_position) before a command runs.
type API struct {
	Deps
	// changes is the change feed of the streams (RunChanges runs it).
	changes *feed
}

// api is the short name the handlers use.
type api = API

// New checks d (defaults filled in) and returns the query side over it.
func New(d Deps) (*API, error) {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return nil, err
	}
	a := &API{Deps: d}
	a.changes = newFeed(d.Log, d.Waiter, d.StreamBuffer, d.Logger, a.classify)
	return a, nil
}

// RunChanges runs the change feed of GET /v1/events until ctx ends (nil)
// or the log or the read models fail; the open streams end when it
// returns. Run it beside the HTTP server and stop it first at shutdown,
// so that the server does not wait for the streams.
func (a *API) RunChanges(ctx context.Context) error { return a.changes.run(ctx) }

// Mount registers the query routes on v1, the /v1 group behind the
// authentication middleware (app.Group("/v1", auth)). Mount the command
// endpoints (infra/commandapi) on the same group.
func (a *API) Mount(v1 fiber.Router) {
	v1.Get("/sessions", a.listSessions)
	v1.Get("/sessions/:id", a.recheck(a.getSession))
	v1.Get("/sessions/:id/logs", a.sessionLogs)
	if a.Occupancy != nil {
		v1.Get("/sessions/:id/pending", a.sessionPending)
		v1.Get("/scheduler/queue", a.schedulerQueue)
		v1.Get("/quotas/mine", a.myQuotas)
	}
	if a.Events != nil {
		v1.Get("/sessions/:id/timeline", a.sessionTimeline)
	}
	v1.Get("/agents", a.listAgents)
	v1.Get("/audit", a.listAudit)
	v1.Get("/audit/stream", a.streamAudit)
	v1.Get("/audit/heads/latest", a.latestAuditHead)
	v1.Get("/events", a.streamEvents)
	a.mountTenancy(v1)
	a.mountVFolders(v1)
	if a.Usage != nil {
		v1.Get("/usage", a.getUsage)
	}
	a.mountMaintenance(v1)
	a.mountSettings(v1)
}

// streams is Deps.Streams or, without it, a context that never ends.
func (a *API) streams() context.Context {
	if a.Streams == nil {
		return context.Background()
	}
	return a.Streams
}

// WaitAll returns a Waiter that waits for every one of ws (the projector
// of each read model) to reach the position.
func WaitAll(ws ...Waiter) Waiter { return waitAll(ws) }

type waitAll []Waiter

func (ws waitAll) WaitFor(ctx context.Context, position uint64) error {
	for _, w := range ws {
		if err := w.WaitFor(ctx, position); err != nil {
			return err
		}
	}
	return nil
}
