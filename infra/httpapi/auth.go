package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// Principal is who is calling, as authentication resolved it.
type Principal struct {
	UserID    string `json:"user_id"`
	Email     string `json:"email"`
	AccessKey string `json:"access_key"`
	Role      string `json:"role"`
	Domain    string `json:"domain"`
	// Projects are the names of the projects (of Domain) the user belongs
	// to, sorted.
	Projects []string `json:"projects"`
	// Method is how the request authenticated: "signature" (a keypair's
	// HMAC), "token" (a login or bearer token in the Authorization
	// header) or "cookie" (the Web-UI's login token in its cookie).
	Method string `json:"method,omitempty"`
	// TokenID is the id of the token the request presented, if any.
	TokenID string `json:"token_id,omitempty"`
}

// Authentication methods (Principal.Method).
const (
	MethodSignature = "signature"
	MethodToken     = "token"
	MethodCookie    = "cookie"
)

const principalKey = "cairn.principal"

// CurrentPrincipal returns the authenticated caller.
func CurrentPrincipal(c *fiber.Ctx) (Principal, bool) {
	p, ok := c.Locals(principalKey).(Principal)
	return p, ok
}

// SetPrincipal records the authenticated caller of a request, for
// authentication middleware.
func SetPrincipal(c *fiber.Ctx, p Principal) { c.Locals(principalKey, p) }

// TokenAuth authenticates "Authorization: Bearer <token>" against a fixed
// set of tokens (the bootstrap admin's; full authentication comes with
// tenancy). Tokens are compared in constant time on their SHA-256.
type TokenAuth struct {
	tokens map[[32]byte]Principal
}

// NewTokenAuth builds the authenticator.
func NewTokenAuth(tokens map[string]Principal) *TokenAuth {
	a := &TokenAuth{tokens: make(map[[32]byte]Principal, len(tokens))}
	for t, p := range tokens {
		a.tokens[sha256.Sum256([]byte(t))] = p
	}
	return a
}

// Middleware rejects unauthenticated requests with 401 problem+json.
func (a *TokenAuth) Middleware(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		return domain.Errorf("", domain.KindUnauthenticated, "missing Authorization header (Bearer token)")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return domain.Errorf("", domain.KindUnauthenticated, "unsupported Authorization scheme; use Bearer <token>")
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	for k, p := range a.tokens {
		if subtle.ConstantTimeCompare(k[:], sum[:]) == 1 {
			SetPrincipal(c, p)
			return c.Next()
		}
	}
	return domain.Errorf("", domain.KindUnauthenticated, "unknown or revoked token")
}
