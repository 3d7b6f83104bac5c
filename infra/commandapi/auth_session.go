package commandapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/httpauth"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const (
	opWebLogin  = "auth.session.create"
	opWebLogout = "auth.session.delete"
)

// webSessionResponse answers a browser's login: who logged in, until
// when, and the CSRF token its writes must carry. The login token itself
// is only in the HttpOnly cookie, out of the page's reach.
type webSessionResponse struct {
	TokenID   uuid.UUID `json:"token_id"`
	ExpiresAt time.Time `json:"expires_at"`
	UserID    uuid.UUID `json:"user_id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	Domain    string    `json:"domain"`
	CSRFToken string    `json:"csrf_token"`
	Position  uint64    `json:"position"`
}

// createWebSession handles POST /v1/auth/session {email, password}, the
// Web-UI's login: the same check and login token as POST /v1/auth/login,
// the token set in the login cookie (HttpOnly, SameSite=Strict, Secure
// under TLS) that expires with it.
func (a *api) createWebSession(c *fiber.Ctx) error {
	l, err := a.logIn(c, opWebLogin)
	if err != nil {
		return err
	}
	httpauth.SetLoginCookie(c, l.secret, l.expires)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusOK).JSON(webSessionResponse{TokenID: l.tokenID, ExpiresAt: l.expires,
		UserID: l.user.ID, Email: l.user.Email, Role: string(l.user.Role), Domain: l.user.Domain,
		CSRFToken: httpauth.CSRFToken(l.secret), Position: l.position})
}

// deleteWebSession handles DELETE /v1/auth/session, the Web-UI's log out:
// the login token the request came with is revoked (the answer waits until
// it no longer works) and the cookie removed. A request authenticated
// otherwise than by a login token (a signature, a script's bearer token)
// has no login to end (409): log out never revokes a script's token.
func (a *api) deleteWebSession(c *fiber.Ctx) error {
	who, err := a.writing(c, opWebLogout)
	if err != nil {
		return err
	}
	noLogin := domain.Errorf(opWebLogout, domain.KindConflict, "the request did not come with a login token: there is no login to end")
	id, err := uuid.Parse(who.TokenID)
	if err != nil || (who.Method != httpapi.MethodCookie && who.Method != httpapi.MethodToken) {
		return noLogin
	}
	switch t, err := a.Tenancy.GetToken(c.UserContext(), id); {
	case errors.Is(err, domain.ErrNotFound):
		return noLogin
	case err != nil:
		return err
	case t.Kind != domain.TokenLogin:
		return noLogin
	}
	accesslog.ExpectStatus(c, http.StatusNoContent)
	res, err := a.Commands.RevokeToken.Handle(c.UserContext(), metadata(c, who), commands.RevokeToken{Actor: actor(who), TokenID: id})
	if err != nil {
		return err
	}
	a.settle(c, res.Position)
	httpauth.ClearLoginCookie(c)
	return c.SendStatus(http.StatusNoContent)
}
