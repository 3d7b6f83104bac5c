package readapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/agents"
	auditrm "github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/tenancy"
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
	// Settings serve the run-time settings (settings_read.go); without
	// them those routes are not mounted.
	Settings SettingsDeps
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
}

// WithDefaults returns d with MaxWait and Clock set when they were not.
func (d Deps) WithDefaults() Deps {
	if d.MaxWait == 0 {
		d.MaxWait = DefaultMaxWait
	}
	if d.Clock == nil {
		d.Clock = time.Now
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
	} {
		if dep.missing {
			errs = append(errs, fmt.Errorf("readapi: no %s", dep.name))
		}
	}
	if d.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("readapi: max wait %v must not be negative", d.MaxWait))
	}
	return errors.Join(errs...)
}

// API is the query side: it serves the query routes (Mount), and the
// command endpoints (infra/commandapi) read through its lookups (what the
// caller may see, wait_for_position) before a command runs.
type API struct {
	Deps
}

// api is the short name the handlers use.
type api = API

// New checks d (defaults filled in) and returns the query side over it.
func New(d Deps) (*API, error) {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &API{Deps: d}, nil
}

// Mount registers the query routes on v1, the /v1 group behind the
// authentication middleware (app.Group("/v1", auth)). Mount the command
// endpoints (infra/commandapi) on the same group.
func (a *API) Mount(v1 fiber.Router) {
	v1.Get("/sessions", a.listSessions)
	v1.Get("/sessions/:id", a.getSession)
	v1.Get("/sessions/:id/logs", a.sessionLogs)
	v1.Get("/agents", a.listAgents)
	v1.Get("/audit", a.listAudit)
	v1.Get("/audit/stream", a.streamAudit)
	a.mountTenancy(v1)
	a.mountVFolders(v1)
	a.mountSettings(v1)
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
