package commandapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/projections/tenancy"
)

const opLogin = "auth.login"

// DefaultLoginTTL is how long a login token lives when Deps.LoginTTL is
// zero.
const DefaultLoginTTL = 12 * time.Hour

// loginRequest is the body of POST /v1/auth/login.
type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// loginResponse is its answer: the token, shown this once.
type loginResponse struct {
	Token     string    `json:"token"`
	TokenID   uuid.UUID `json:"token_id"`
	ExpiresAt time.Time `json:"expires_at"`
	UserID    uuid.UUID `json:"user_id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	Domain    string    `json:"domain"`
	Position  uint64    `json:"position"`
}

// errBadLogin is the one answer for an unknown e-mail address and a wrong
// password alike.
var errBadLogin = &domain.Error{Op: opLogin, Kind: domain.KindUnauthenticated, Message: "wrong e-mail address or password"}

// login handles POST /v1/auth/login {email, password}: it checks the
// password (argon2id; an unknown address spends the same time, see
// password.VerifyMissing) and issues a login token that expires after
// Deps.LoginTTL. A hash made with older parameters is replaced
// (ModifyUser) once the password is known to be right. The answer waits
// until the token is usable.
func (a *api) login(c *fiber.Ctx) error {
	l, err := a.logIn(c, opLogin)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(l.response())
}

// loggedIn is a successful login: the user, the token's secret and when
// it expires.
type loggedIn struct {
	user     tenancy.Login
	secret   string
	tokenID  uuid.UUID
	expires  time.Time
	position uint64
}

func (l loggedIn) response() loginResponse {
	return loginResponse{Token: l.secret, TokenID: l.tokenID, ExpiresAt: l.expires,
		UserID: l.user.ID, Email: l.user.Email, Role: string(l.user.Role), Domain: l.user.Domain, Position: l.position}
}

// logIn reads {email, password} from the body, checks them and issues a
// login token (see login).
func (a *api) logIn(c *fiber.Ctx, op string) (loggedIn, error) {
	var req loginRequest
	if err := decode(c, &req); err != nil {
		return loggedIn{}, err
	}
	var errs []error
	if strings.TrimSpace(req.Email) == "" {
		errs = append(errs, domain.Invalid(op, "email", "required"))
	}
	if req.Password == "" {
		errs = append(errs, domain.Invalid(op, "password", "required"))
	}
	if len(req.Password) > commands.MaxPasswordLength {
		errs = append(errs, domain.Invalid(op, "password", "longer than %d bytes", commands.MaxPasswordLength))
	}
	if err := errors.Join(errs...); err != nil {
		return loggedIn{}, err
	}
	ctx := c.UserContext()
	l, err := a.Tenancy.Login(ctx, req.Email)
	if errors.Is(err, domain.ErrNotFound) && a.ReachHead(ctx) {
		// A user created a moment ago may not be in the read model yet:
		// once it shows everything committed so far, look again.
		l, err = a.Tenancy.Login(ctx, req.Email)
	}
	if errors.Is(err, domain.ErrNotFound) {
		password.VerifyMissing(req.Password, a.Passwords)
		return loggedIn{}, errBadLogin
	}
	if err != nil {
		return loggedIn{}, err
	}
	ok, err := password.Verify(req.Password, l.PasswordHash)
	if err != nil {
		return loggedIn{}, &domain.Error{Op: op, Kind: domain.KindInternal, Message: "the stored password hash is unusable", Err: err}
	}
	if !ok {
		return loggedIn{}, errBadLogin
	}
	if l.Status != domain.UserActive {
		return loggedIn{}, &domain.Error{Op: op, Kind: domain.KindUnauthenticated, Message: "the account is " + string(l.Status)}
	}
	// The user is known now: the audit record and the events name it.
	who := caller{Principal: httpapi.Principal{UserID: l.ID.String(), Email: l.Email, AccessKey: l.MainAccessKey,
		Role: string(l.Role), Domain: l.Domain, Method: httpapi.MethodToken}, ID: l.ID}
	httpapi.SetPrincipal(c, who.Principal)
	accesslog.ExpectStatus(c, http.StatusOK)

	secret, tok, err := token.Issue(token.Login, a.Clock(), a.LoginTTL)
	if err != nil {
		return loggedIn{}, err
	}
	res, err := a.Commands.IssueToken.Handle(ctx, metadata(c, who), commands.IssueToken{Actor: actor(who), UserID: l.ID,
		Kind: domain.TokenLogin, Digest: tok.Digest.String(), Description: "login", ExpiresAt: tok.ExpiresAt})
	if err != nil {
		return loggedIn{}, err
	}
	pos := res.Position
	if password.NeedsRehash(l.PasswordHash, a.Passwords) {
		pos = max(pos, a.rehash(c, who, req.Password))
	}
	a.settle(c, pos)
	return loggedIn{user: l, secret: secret, tokenID: res.TokenID, expires: tok.ExpiresAt, position: pos}, nil
}

// rehashActor changes a password hash on the user's behalf at login: the
// user may not modify itself, the login may.
var rehashActor = commands.Principal{Role: domain.RoleSuperadmin}

// rehash stores a hash of the (correct) password under the current
// parameters; a failure is logged by the caller's absence of a position,
// never refused: the login itself succeeded.
func (a *api) rehash(c *fiber.Ctx, who caller, pw string) uint64 {
	res, err := a.Commands.ModifyUser.Handle(c.UserContext(), metadata(c, who), commands.ModifyUser{Actor: rehashActor, UserID: who.ID, Password: &pw})
	if err != nil {
		return 0
	}
	return res.Position
}
