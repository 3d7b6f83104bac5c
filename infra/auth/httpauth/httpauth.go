package httpauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// Directory is what authentication reads: the tenancy read model
// (*tenancy.ReadModel) satisfies it.
type Directory interface {
	Credentials(ctx context.Context, accessKey string) (tenancy.Credentials, error)
	TokenByDigest(ctx context.Context, digest string) (tenancy.TokenGrant, error)
	ProjectsOf(ctx context.Context, user uuid.UUID) ([]tenancy.Member, error)
}

var _ Directory = (*tenancy.ReadModel)(nil)

// Config tunes an Authenticator; the zero value is valid.
type Config struct {
	// MaxSkew is how far a signed request's date may be from the clock
	// (default signing.DefaultMaxSkew, 15 minutes).
	MaxSkew time.Duration
	// Clock reads the time (default time.Now).
	Clock func() time.Time
	// Freshness, when both its functions are set, turns on a cache of the
	// directory's answers that lasts until the tenancy read model changes
	// (see Freshness). Without it every request reads the read model.
	Freshness Freshness
	// CacheSize bounds the cache (default DefaultCacheSize entries).
	CacheSize int
	// ReplayCacheSize bounds how many strict-mode signatures are
	// remembered to refuse their replays (default
	// signing.DefaultReplayCacheSize); when it is full the accepted
	// window shrinks (see signing.ReplayCache).
	ReplayCacheSize int
	// StrictSigningOnly refuses Backend.AI-compatible signatures, whose
	// requests can be replayed: for deployments without Backend.AI
	// clients (Cairn's own sign in strict mode).
	StrictSigningOnly bool
	// Registerer receives the authentication metrics (nil: none).
	Registerer prometheus.Registerer
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.MaxSkew < 0 {
		errs = append(errs, fmt.Errorf("httpauth: max skew %v must not be negative", c.MaxSkew))
	}
	if c.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("httpauth: cache size %d must not be negative", c.CacheSize))
	}
	if c.ReplayCacheSize < 0 {
		errs = append(errs, fmt.Errorf("httpauth: replay cache size %d must not be negative", c.ReplayCacheSize))
	}
	return errors.Join(errs...)
}

// Authenticator is the authentication middleware. It is safe for
// concurrent use.
type Authenticator struct {
	dir        Directory
	maxSkew    time.Duration
	clock      func() time.Time
	replay     *signing.ReplayCache
	strictOnly bool
	metrics    *metrics
}

// New returns an Authenticator over dir.
func New(dir Directory, cfg Config) (*Authenticator, error) {
	if dir == nil {
		return nil, errors.New("httpauth: no directory")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxSkew == 0 {
		cfg.MaxSkew = signing.DefaultMaxSkew
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Freshness.Committed != nil && cfg.Freshness.Changed != nil {
		dir = newCachingDirectory(dir, cfg.Freshness, cfg.CacheSize)
	}
	replay, err := signing.NewReplayCache(cfg.ReplayCacheSize)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{dir: dir, maxSkew: cfg.MaxSkew, clock: cfg.Clock, replay: replay, strictOnly: cfg.StrictSigningOnly}
	if a.metrics, err = newMetrics(cfg.Registerer, a); err != nil {
		return nil, err
	}
	return a, nil
}

// Middleware authenticates the request and records its principal
// (httpapi.CurrentPrincipal), or refuses it with a 401. A strict-mode
// request whose streamed body turns out not to be the signed one is
// answered 401 (body-mismatch) whatever the handler answered; the handler
// read it through httpapi.BodyStream, which failed at its end, so it
// committed nothing.
func (a *Authenticator) Middleware(c *fiber.Ctx) error {
	p, err := a.Authenticate(c)
	if err != nil {
		if c.Request().IsBodyStream() {
			// The streamed body (an upload) is not read: close the
			// connection rather than drain it or parse it as a request.
			c.Context().SetConnectionClose()
		}
		return err
	}
	httpapi.SetPrincipal(c, p)
	err = c.Next()
	if br, ok := c.Locals(bodyReaderKey).(*signing.BodyReader); ok && br.Err() != nil {
		return br.Err()
	}
	return err
}

const bodyReaderKey = "cairn.auth.body_reader"

// Authenticate resolves the principal of a request without serving it.
func (a *Authenticator) Authenticate(c *fiber.Ctx) (httpapi.Principal, error) {
	h := c.Get(fiber.HeaderAuthorization)
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	switch {
	case h == "" && c.Cookies(CookieName) != "":
		return a.cookie(c, strings.Clone(c.Cookies(CookieName)))
	case h == "":
		return httpapi.Principal{}, refuse("missing Authorization header: sign the request (Authorization: BackendAI signMethod=HMAC-SHA256, credential=...) or send Authorization: Bearer <token>")
	case signing.HasScheme(h):
		return a.signed(c)
	case strings.EqualFold(scheme, "Bearer"):
		return a.bearer(c, strings.TrimSpace(rest))
	}
	return httpapi.Principal{}, refuse("unsupported Authorization scheme; use BackendAI (signed requests) or Bearer <token>")
}

// signed verifies a signed request (either mode).
func (a *Authenticator) signed(c *fiber.Ctx) (httpapi.Principal, error) {
	ctx := c.UserContext()
	var creds tenancy.Credentials
	v := signing.Verifier{
		Now:        a.clock,
		MaxSkew:    a.maxSkew,
		Replay:     a.replay,
		StrictOnly: a.strictOnly,
		Lookup: func(ctx context.Context, accessKey string) (signing.Secret, bool, error) {
			cr, err := a.dir.Credentials(ctx, accessKey)
			switch {
			case errors.Is(err, domain.ErrNotFound):
				return signing.Secret{}, false, nil
			case err != nil:
				return signing.Secret{}, false, err
			}
			creds = cr
			return signing.Secret{SecretKey: cr.SecretKey, Active: cr.IsActive}, true, nil
		},
	}
	// A streamed body (a file upload) is still to be read: a strict
	// signature is checked over the hash it claims, and the body against
	// that hash as the handler reads it. Any other body was read whole
	// before this middleware and is checked now, as received (c.Body()
	// would undo a Content-Encoding).
	streamed := c.Request().IsBodyStream()
	in := signing.Incoming{
		Method:       c.Method(),
		PathQuery:    string(c.Request().RequestURI()),
		Host:         string(c.Request().Header.Host()),
		Header:       func(name string) string { return c.Get(name) },
		BodyStreamed: streamed,
	}
	if !streamed {
		in.Body = c.Request().Body()
	}
	res, err := v.Verify(ctx, in)
	if res.AccessKey != "" {
		accesslog.ClaimAccessKey(c, res.AccessKey)
	}
	if err != nil {
		reason := signing.ReasonOf(err)
		if reason == signing.ReasonNone {
			return httpapi.Principal{}, &domain.Error{Op: "auth", Kind: domain.KindUnavailable, Message: "cannot check the access key now", Err: err}
		}
		a.metrics.refused(reason)
		return httpapi.Principal{}, err
	}
	if res.Mode == signing.ModeStrict && streamed {
		sum := res.ContentSHA256
		httpapi.WrapBodyStream(c, func(r io.Reader) io.Reader {
			br := signing.VerifyBody(r, sum)
			c.Locals(bodyReaderKey, br)
			return br
		})
	}
	if creds.UserStatus != domain.UserActive {
		return httpapi.Principal{}, refuse("the owner of access key " + res.AccessKey + " is not an active user")
	}
	return a.principal(ctx, httpapi.Principal{
		UserID: creds.UserID.String(), Email: creds.Email, AccessKey: res.AccessKey, Role: string(creds.Role),
		Domain: creds.Domain, Method: httpapi.MethodSignature,
	}, creds.UserID)
}

// bearer checks a login or bearer token.
func (a *Authenticator) bearer(c *fiber.Ctx, secret string) (httpapi.Principal, error) {
	ctx := c.UserContext()
	kind, digest, err := token.Parse(secret)
	if err != nil {
		return httpapi.Principal{}, err
	}
	g, err := a.dir.TokenByDigest(ctx, digest.String())
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return httpapi.Principal{}, token.ErrMismatch
	case err != nil:
		return httpapi.Principal{}, &domain.Error{Op: "auth", Kind: domain.KindUnavailable, Message: "cannot check the token now", Err: err}
	case string(g.Kind) != string(kind) || g.Revoked():
		return httpapi.Principal{}, token.ErrMismatch
	}
	if err := (token.Token{Kind: kind, Digest: digest, ExpiresAt: g.ExpiresAt}).Valid(a.clock()); err != nil {
		return httpapi.Principal{}, err
	}
	if g.UserStatus != domain.UserActive {
		return httpapi.Principal{}, refuse("the token's user is not an active user")
	}
	return a.principal(ctx, httpapi.Principal{
		UserID: g.UserID.String(), Email: g.Email, AccessKey: g.MainAccessKey, Role: string(g.Role),
		Domain: g.Domain, Method: httpapi.MethodToken, TokenID: g.ID.String(),
	}, g.UserID)
}

// principal adds the user's projects.
func (a *Authenticator) principal(ctx context.Context, p httpapi.Principal, user uuid.UUID) (httpapi.Principal, error) {
	ms, err := a.dir.ProjectsOf(ctx, user)
	if err != nil {
		return httpapi.Principal{}, &domain.Error{Op: "auth", Kind: domain.KindUnavailable, Message: "cannot read the user's projects now", Err: err}
	}
	p.Projects = make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Domain == p.Domain {
			p.Projects = append(p.Projects, m.Project)
		}
	}
	slices.Sort(p.Projects)
	return p, nil
}

func refuse(msg string) error {
	return &domain.Error{Op: "auth", Kind: domain.KindUnauthenticated, Message: msg}
}

// replayWindow is how old a strict-mode request may be: the skew window,
// or less when the replay cache's floor is inside it.
func (a *Authenticator) replayWindow() time.Duration {
	floor := a.replay.Floor()
	now := a.clock()
	if floor.IsZero() || now.Sub(floor) > a.maxSkew {
		return a.maxSkew
	}
	return max(0, now.Sub(floor))
}
