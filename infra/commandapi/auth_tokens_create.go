package commandapi

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/token"
)

const opCreateToken = "token.issue"

// Bounds of a script token's lifetime (ttl, in seconds).
const (
	DefaultTokenTTL = 30 * 24 * time.Hour
	MaxTokenTTL     = 366 * 24 * time.Hour
)

// createTokenRequest is the body of POST /v1/auth/tokens.
type createTokenRequest struct {
	// TTL is the token's lifetime in seconds (default 30 days, at most
	// 366 days).
	TTL         *int64 `json:"ttl"`
	Description string `json:"description"`
}

// createTokenResponse carries the token, shown this once.
type createTokenResponse struct {
	ID        uuid.UUID `json:"id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Position  uint64    `json:"position"`
}

// createToken handles POST /v1/auth/tokens: a bearer token for scripts,
// for the caller itself. The answer waits until the token is usable.
func (a *api) createToken(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateToken)
	if err != nil {
		return err
	}
	var req createTokenRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	ttl := DefaultTokenTTL
	if req.TTL != nil {
		ttl = time.Duration(*req.TTL) * time.Second
		if *req.TTL < 60 || ttl > MaxTokenTTL {
			return domain.Invalid(opCreateToken, "ttl", "must be between 60 and %d seconds", int64(MaxTokenTTL/time.Second))
		}
	}
	secret, tok, err := token.Issue(token.Bearer, a.Clock(), ttl)
	if err != nil {
		return err
	}
	res, err := a.Commands.IssueToken.Handle(c.UserContext(), metadata(c, who), commands.IssueToken{Actor: actor(who), UserID: who.ID,
		Kind: domain.TokenBearer, Digest: tok.Digest.String(), Description: req.Description, ExpiresAt: tok.ExpiresAt})
	if err != nil {
		return err
	}
	a.settle(c, res.Position)
	c.Location("/v1/auth/tokens/" + res.TokenID.String())
	return c.Status(http.StatusCreated).JSON(createTokenResponse{ID: res.TokenID, Token: secret, ExpiresAt: tok.ExpiresAt, Position: res.Position})
}
