package readapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/projections/agents"
	"github.com/cairnhq/cairn/projections/sessions"
)

// DefaultMaxWait bounds a wait_for_position when Deps.MaxWait is zero.
const DefaultMaxWait = 10 * time.Second

// Deps is what the routes work with.
type Deps struct {
	Commands *commands.Handlers
	Sessions *sessions.ReadModel
	Agents   *agents.ReadModel
	// Waiter waits until the read models reflect a position (the
	// projectors; WaitAll combines several).
	Waiter Waiter
	// Logs reads kernel logs (the in-process agent, or a remote one).
	Logs LogSource
	// Images tells registered images.
	Images ImageCatalog
	// Auth authenticates every /v1 request, e.g.
	// (*httpapi.TokenAuth).Middleware.
	Auth fiber.Handler
	// MaxWait caps a wait_for_position (default DefaultMaxWait).
	MaxWait time.Duration
	// Clock reads the time (default time.Now).
	Clock func() time.Time
	// VFolders serve the virtual folder routes (vfolders.go); without
	// them those routes are not mounted.
	VFolders VFolderDeps
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

// ImageCatalog tells whether an image reference is registered.
type ImageCatalog interface {
	Known(ref string) bool
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
		{"Commands", d.Commands == nil},
		{"Sessions", d.Sessions == nil},
		{"Agents", d.Agents == nil},
		{"Waiter", d.Waiter == nil},
		{"Logs", d.Logs == nil},
		{"Images", d.Images == nil},
		{"Auth", d.Auth == nil},
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

// api holds the dependencies the handlers share.
type api struct {
	Deps
}

// Mount registers the /v1 routes on app (built by httpapi.New), every one
// behind d.Auth. It refuses incomplete dependencies.
func Mount(app *fiber.App, d Deps) error {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return err
	}
	a := &api{Deps: d}
	v1 := app.Group("/v1", d.Auth)
	v1.Post("/sessions", a.createSession)
	v1.Get("/sessions", a.listSessions)
	v1.Get("/sessions/:id", a.getSession)
	v1.Delete("/sessions/:id", a.deleteSession)
	v1.Get("/sessions/:id/logs", a.sessionLogs)
	v1.Get("/agents", a.listAgents)
	a.mountVFolders(v1)
	return nil
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
