package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// Principal is who is calling.
type Principal struct {
	UserID    string `json:"user_id"`
	Email     string `json:"email"`
	AccessKey string `json:"access_key"`
	Role      string `json:"role"`
	Domain    string `json:"domain"`
}

const principalKey = "cairn.principal"

// CurrentPrincipal returns the authenticated caller.
func CurrentPrincipal(c *fiber.Ctx) (Principal, bool) {
	p, ok := c.Locals(principalKey).(Principal)
	return p, ok
}

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
			c.Locals(principalKey, p)
			return c.Next()
		}
	}
	return domain.Errorf("", domain.KindUnauthenticated, "unknown or revoked token")
}
