package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the events of API tokens (token-<uuid>).
const (
	TypeTokenIssued  = "token.issued"
	TypeTokenRevoked = "token.revoked"
)

// TokenIssued: a bearer token exists for a user until ExpiresAt. Only the
// SHA-256 digest of the token is recorded; the token itself was shown to
// its holder once and is kept nowhere.
type TokenIssued struct {
	TokenID     uuid.UUID `json:"token_id"`
	UserID      uuid.UUID `json:"user_id"`
	Domain      string    `json:"domain"`
	Kind        TokenKind `json:"kind"`
	Digest      string    `json:"digest"`
	Description string    `json:"description,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
	At          time.Time `json:"at"`
}

// TokenRevoked: the token no longer authenticates anyone.
type TokenRevoked struct {
	At time.Time `json:"at"`
}

func (TokenIssued) EventType() string  { return TypeTokenIssued }
func (TokenRevoked) EventType() string { return TypeTokenRevoked }
