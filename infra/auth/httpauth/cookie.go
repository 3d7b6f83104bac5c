package httpauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// The Web-UI's login lives in a cookie the browser's scripts cannot read
// (HttpOnly, SameSite=Strict, Secure under TLS). It holds a login token
// (infra/auth/token), looked up and checked exactly like a Bearer token.
//
// A browser sends the cookie with every request to the site, whoever wrote
// the page that makes it, so a request authenticated by the cookie that
// changes something (any method but GET, HEAD and OPTIONS) must also prove
// that the page is Cairn's own: it carries the CSRF token in the
// CSRFHeader, and its Origin (when the browser sends one) is the API's
// own. The CSRF token is derived from the login token (an HMAC of it), so
// the server keeps nothing; it reaches the page in the body of the login
// answer and in the CSRFHeader of every cookie-authenticated answer, which
// another site's scripts cannot read.
const (
	// CookieName is the name of the login cookie.
	CookieName = "cairn_session"
	// CSRFHeader carries the CSRF token: in the page's writes, and in the
	// answers to cookie-authenticated requests.
	CSRFHeader = "X-CSRF-Token"
)

// CSRFToken is the CSRF token that goes with the login token secret.
func CSRFToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("cairn csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SetLoginCookie makes the answer set the login cookie to secret until
// expires; Secure when the request came over TLS (or a proxy says so).
func SetLoginCookie(c *fiber.Ctx, secret string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: CookieName, Value: secret, Path: "/", Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
}

// ClearLoginCookie makes the answer remove the login cookie.
func ClearLoginCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: CookieName, Value: "", Path: "/", Expires: time.Unix(0, 0), MaxAge: -1,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
}

// safeMethod reports whether a request with method m changes nothing.
func safeMethod(m string) bool {
	return m == fiber.MethodGet || m == fiber.MethodHead || m == fiber.MethodOptions
}

// cookie authenticates a request by its login cookie, and checks a write's
// CSRF token and origin.
func (a *Authenticator) cookie(c *fiber.Ctx, secret string) (httpapi.Principal, error) {
	p, err := a.bearer(c, secret)
	if err != nil {
		return p, err
	}
	p.Method = httpapi.MethodCookie
	want := CSRFToken(secret)
	if !safeMethod(c.Method()) {
		if err := checkOrigin(c); err != nil {
			return httpapi.Principal{}, err
		}
		got := c.Get(CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return httpapi.Principal{}, csrfRefused("missing or wrong " + CSRFHeader + " header: a write authenticated by the login cookie must carry the CSRF token the login answered")
		}
	}
	c.Set(CSRFHeader, want)
	return p, nil
}

// checkOrigin refuses a write whose browser says it comes from another
// site: Sec-Fetch-Site cross-site, or an Origin whose host is not the
// request's.
func checkOrigin(c *fiber.Ctx) error {
	if c.Get("Sec-Fetch-Site") == "cross-site" {
		return csrfRefused("cross-site request refused")
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || !strings.EqualFold(u.Host, string(c.Request().Header.Host())) {
		return csrfRefused("request from origin " + origin + " refused")
	}
	return nil
}

func csrfRefused(msg string) error {
	return &domain.Error{Op: "auth.csrf", Kind: domain.KindForbidden, Message: msg}
}
