package commandapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/readapi"
)

// Deps is what the command endpoints work with.
type Deps struct {
	// Queries is the query side: the read models the handlers look
	// objects up in before a command runs, wait_for_position, the clock.
	Queries  *readapi.API
	Commands *commands.Handlers
	// Passwords are the argon2id parameters of new hashes: login verifies
	// with them when the e-mail is unknown (so timing tells nothing) and
	// rehashes older hashes with them (default password.DefaultParams()).
	Passwords password.Params
	// LoginTTL is how long a login token lives (default DefaultLoginTTL).
	LoginTTL time.Duration
	// VFolders serve the virtual folder commands and file routes
	// (vfolders.go); without them those routes are not mounted.
	VFolders VFolderDeps
	// Bus signs enrolled agents' bus credentials; without it POST
	// /v1/agent-enrollments answers 503.
	Bus BusSigner
	// Maintenance starts rebuilds and audit verifications (maintenance.go);
	// without it those routes are not mounted.
	Maintenance Maintenance
	// Apps open a session's apps through the app proxy
	// (sessions_apps_open.go).
	Apps AppDeps
}

// WithDefaults returns d with Passwords and LoginTTL set when they were not.
func (d Deps) WithDefaults() Deps {
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
	if d.Queries == nil {
		errs = append(errs, errors.New("commandapi: no Queries"))
	}
	if d.Commands == nil {
		errs = append(errs, errors.New("commandapi: no Commands"))
	}
	if d.Passwords != (password.Params{}) {
		if err := d.Passwords.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("commandapi: password parameters: %w", err))
		}
	}
	if d.LoginTTL < 0 {
		errs = append(errs, fmt.Errorf("commandapi: login token lifetime %v must not be negative", d.LoginTTL))
	}
	return errors.Join(errs...)
}

// API is the write side's HTTP port: the command endpoints.
type API struct {
	// The query side's lookups and fields (Tenancy, Waiter, MaxWait,
	// Clock) are the handlers' own.
	*readapi.API
	Deps
	// scopes serialises uploads per quota scope.
	scopes keyedMutex
}

// api is the short name the handlers use.
type api = API

// New checks d (defaults filled in) and returns the command endpoints over
// it.
func New(d Deps) (*API, error) {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &API{API: d.Queries, Deps: d}, nil
}

// MountPublic registers the command endpoints that come before
// authentication: POST /v1/auth/login (how a caller gets a token) and POST
// /v1/agent-enrollments (an agent enrolls with a one-time token, not as a
// user). Call it before the authenticated /v1 group is made: fiber runs
// handlers in the order they were registered.
func (a *API) MountPublic(app *fiber.App) {
	app.Post("/v1/auth/login", a.login)
	app.Post("/v1/auth/session", a.createWebSession)
	app.Post("/v1/agent-enrollments", a.enrollAgent)
}

// Mount registers the other command endpoints on v1, the /v1 group behind
// the authentication middleware (app.Group("/v1", auth)); readapi's
// queries go on the same group.
func (a *API) Mount(v1 fiber.Router) {
	v1.Use(auditorsReadOnly)
	v1.Delete("/auth/session", a.deleteWebSession)
	v1.Post("/sessions", a.createSession)
	v1.Delete("/sessions/:id", a.deleteSession)
	v1.Post("/sessions/:id/apps/:app", a.openApp)
	v1.Post("/agents/:id/enrollment", a.offerEnrollment)
	v1.Delete("/agents/:id/enrollment", a.revokeEnrollment)
	v1.Post("/agents/:id/lost", a.markAgentLost)
	a.mountTenancy(v1)
	a.mountVFolders(v1)
	a.mountMaintenance(v1)
	v1.Patch("/settings", a.changeSettings)
}

// StreamsBody reports whether a request is a file upload, whose body the
// handler streams to storage (httpapi.Config.StreamRequestBody): a PUT of
// a file, or a resumable upload's creation or chunk. No other route reads
// a body beyond the server's body limit.
func StreamsBody(c *fiber.Ctx) bool {
	p := c.Path()
	if !strings.HasPrefix(p, "/v1/vfolders/") {
		return false
	}
	switch c.Method() {
	case http.MethodPut:
		return strings.HasSuffix(p, "/files/content")
	case http.MethodPost:
		return strings.HasSuffix(p, "/uploads")
	case http.MethodPatch:
		return strings.Contains(p, "/uploads/")
	}
	return false
}

// caller is the authenticated principal (readapi.CallerOf).
type caller = readapi.Caller

// defaultScope names the project a session request falls back to when
// its body names none.
const defaultScope = "default"

// actor is the caller as the commands authorize it.
func actor(u caller) commands.Principal {
	return commands.Principal{UserID: u.ID, Role: domain.Role(u.Role), Domain: u.Domain}
}

// mayWrite refuses read-only callers (monitors and auditors).
func mayWrite(u caller, op string) error {
	if domain.Role(u.Role).ReadOnly() {
		return domain.Errorf(op, domain.KindForbidden, "the %s role is read-only", u.Role)
	}
	return nil
}

// auditorsReadOnly refuses every command of an auditor (403) before its
// handler runs, whatever the handler would decide: auditors write nothing.
// Left to them are the reads (GET, HEAD, OPTIONS), their own
// authentication (/v1/auth/...: log out, their own tokens for scripts)
// and starting a verification of the audit trail, a job that writes
// nothing to the store.
func auditorsReadOnly(c *fiber.Ctx) error {
	p, ok := httpapi.CurrentPrincipal(c)
	if !ok || !domain.Role(p.Role).Auditor() {
		return c.Next()
	}
	switch c.Method() {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return c.Next()
	}
	path := c.Path()
	if strings.HasPrefix(path, "/v1/auth/") || (c.Method() == http.MethodPost && path == "/v1/audit/verify") {
		return c.Next()
	}
	return domain.Errorf("", domain.KindForbidden, "the %s role is read-only", p.Role)
}

// metadata is what the events of a command record about the request.
func metadata(c *fiber.Ctx, u caller) commands.Metadata {
	// fiber's strings may point into the request buffer: the metadata
	// outlives nothing here, but copying keeps it safe if it ever does.
	return commands.Metadata{
		Actor:     strings.Clone(u.UserID),
		AccessKey: strings.Clone(u.AccessKey),
		RequestID: strings.Clone(httpapi.RequestID(c)),
		ClientIP:  c.IP(),
		Access:    accessOf(c),
	}
}

// accessOf is the request's access record on its way to its commands'
// first append (see accesslog.Carry).
func accessOf(c *fiber.Ctx) *commands.Access { return accesslog.Carry(c, commands.NewAccess) }

// written is the answer of a command that changed an object: the position
// of its events (wait_for_position on a later GET reads it back).
type written struct {
	Position uint64 `json:"position"`
}

// writing authenticates a command and honours its wait_for_position, so a
// client can make sure the objects it names are visible to the checks
// made on the read model first.
func (a *api) writing(c *fiber.Ctx, op string) (caller, error) { return a.Reading(c, op) }

// decode decodes the body strictly (httpapi.DecodeJSON), naming the
// offending field.
func decode(c *fiber.Ctx, v any) error { return httpapi.DecodeJSON(c.Body(), v) }

// settle waits, at most MaxWait, until the read models reflect position,
// for answers whose effect the very next request depends on (a token
// issued or revoked). Past the wait the answer goes out anyway: the
// command succeeded, and the position lets the client wait itself.
func (a *api) settle(c *fiber.Ctx, position uint64) {
	ctx, cancel := context.WithTimeout(c.UserContext(), a.MaxWait)
	defer cancel()
	_ = a.Waiter.WaitFor(ctx, position)
}

// nonNil returns s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
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
