package readapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/projections/agents"
	auditrm "github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// DefaultMaxWait bounds a wait_for_position when Deps.MaxWait is zero.
const DefaultMaxWait = 10 * time.Second

// Deps is what the routes work with.
type Deps struct {
	Commands *commands.Handlers
	Sessions *sessions.ReadModel
	Agents   *agents.ReadModel
	Audit    *auditrm.ReadModel
	// Waiter waits until the read models reflect a position (the
	// projectors; WaitAll combines several).
	Waiter Waiter
	// Logs reads kernel logs (the in-process agent, or a remote one).
	Logs LogSource
	// Tenancy is the tenancy read model: the admin queries, login, and
	// what a session request is checked against (projects, resource
	// groups, the image registry).
	Tenancy *tenancy.ReadModel
	// Passwords are the argon2id parameters of new hashes: login verifies
	// with them when the e-mail is unknown (so timing tells nothing) and
	// rehashes older hashes with them (default password.DefaultParams()).
	Passwords password.Params
	// LoginTTL is how long a login token lives (default DefaultLoginTTL).
	LoginTTL time.Duration
	// Auth authenticates every /v1 request but POST /v1/auth/login, e.g.
	// (*httpauth.Authenticator).Middleware.
	Auth fiber.Handler
	// MaxWait caps a wait_for_position (default DefaultMaxWait).
	MaxWait time.Duration
	// Clock reads the time (default time.Now).
	Clock func() time.Time
	// VFolders serve the virtual folder routes (vfolders.go); without
	// them those routes are not mounted.
	VFolders VFolderDeps
	// Bus signs enrolled agents' bus credentials; without it POST
	// /v1/agent-enrollments answers 503.
	Bus BusSigner
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
	if d.Passwords == (password.Params{}) {
		d.Passwords = password.DefaultParams()
	}
	if d.LoginTTL == 0 {
		d.LoginTTL = DefaultLoginTTL
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
		{"Audit", d.Audit == nil},
		{"Waiter", d.Waiter == nil},
		{"Logs", d.Logs == nil},
		{"Tenancy", d.Tenancy == nil},
		{"Auth", d.Auth == nil},
	} {
		if dep.missing {
			errs = append(errs, fmt.Errorf("readapi: no %s", dep.name))
		}
	}
	if d.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("readapi: max wait %v must not be negative", d.MaxWait))
	}
	if d.Passwords != (password.Params{}) {
		if err := d.Passwords.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("readapi: password parameters: %w", err))
		}
	}
	if d.LoginTTL < 0 {
		errs = append(errs, fmt.Errorf("readapi: login token lifetime %v must not be negative", d.LoginTTL))
	}
	return errors.Join(errs...)
}

// api holds the dependencies the handlers share.
type api struct {
	Deps
	// scopes serialises uploads per quota scope.
	scopes keyedMutex
}

// keyedMutex is a mutex per key, made on first use and dropped when no
// one holds or waits for it.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

// lock takes key's mutex and returns the function that releases it.
func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// Mount registers the /v1 routes on app (built by httpapi.New), every one
// behind d.Auth. It refuses incomplete dependencies.
func Mount(app *fiber.App, d Deps) error {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return err
	}
	a := &api{Deps: d}
	// Login is how a caller gets a token, enrollment how an agent gets
	// its bus credentials: the /v1 routes before authentication.
	app.Post("/v1/auth/login", a.login)
	// An agent enrolls with a one-time token, not as a user.
	app.Post("/v1/agent-enrollments", a.enrollAgent)
	v1 := app.Group("/v1", d.Auth)
	v1.Post("/sessions", a.createSession)
	v1.Get("/sessions", a.listSessions)
	v1.Get("/sessions/:id", a.getSession)
	v1.Delete("/sessions/:id", a.deleteSession)
	v1.Get("/sessions/:id/logs", a.sessionLogs)
	v1.Get("/agents", a.listAgents)
	v1.Post("/agents/:id/enrollment", a.offerEnrollment)
	v1.Delete("/agents/:id/enrollment", a.revokeEnrollment)
	v1.Post("/agents/:id/lost", a.markAgentLost)
	v1.Get("/audit", a.listAudit)
	v1.Get("/audit/stream", a.streamAudit)
	a.mountTenancy(v1)
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
