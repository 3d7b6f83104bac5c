package domain

import (
	"time"

	"github.com/google/uuid"
)

// TokenKind says how an API token was obtained: by logging in with an
// e-mail address and password (the Web-UI), or issued for a script.
type TokenKind string

const (
	TokenLogin  TokenKind = "login"
	TokenBearer TokenKind = "bearer"
)

// Valid reports whether k is a known kind.
func (k TokenKind) Valid() bool { return k == TokenLogin || k == TokenBearer }

// Token limits.
const (
	// MaxTokenLifetime bounds how long a token may live: ten years (the
	// bootstrap superadmin's token is long-lived; scripts' are bounded by
	// the HTTP API).
	MaxTokenLifetime    = 10 * 365 * 24 * time.Hour
	tokenDigestLength   = 64
	maxTokenDescription = 256
)

// TokenSpec is what a token is issued with. The digest is the lower-case
// hex SHA-256 of the token the caller generated (infra/auth/token).
type TokenSpec struct {
	ID          uuid.UUID
	UserID      uuid.UUID
	Domain      string // the user's domain, for authorization from the token's own stream
	Kind        TokenKind
	Digest      string
	Description string
	ExpiresAt   time.Time
}

// Token is the API token aggregate (stream token-<uuid>): who it speaks
// for, until when, and whether it was revoked. The zero Token does not
// exist.
type Token struct {
	stateOf
	id          uuid.UUID
	userID      uuid.UUID
	domainName  string
	kind        TokenKind
	digest      string
	description string
	issuedAt    time.Time
	expiresAt   time.Time
	revokedAt   time.Time
}

func (t *Token) ID() uuid.UUID        { return t.id }
func (t *Token) UserID() uuid.UUID    { return t.userID }
func (t *Token) Domain() string       { return t.domainName }
func (t *Token) Kind() TokenKind      { return t.kind }
func (t *Token) Digest() string       { return t.digest }
func (t *Token) Description() string  { return t.description }
func (t *Token) IssuedAt() time.Time  { return t.issuedAt }
func (t *Token) ExpiresAt() time.Time { return t.expiresAt }

// Revoked reports whether the token was revoked.
func (t *Token) Revoked() bool { return !t.revokedAt.IsZero() }

// RehydrateToken folds a token stream's events.
func RehydrateToken(events []RecordedEvent) (*Token, error) {
	t := &Token{stateOf: stateOf{revision: -1}}
	if err := fold("token.rehydrate", events, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Token) apply(ev Event) error {
	if _, first := ev.(TokenIssued); first == t.exists {
		if first {
			return createdTwice("token")
		}
		return eventBeforeCreation("token")
	}
	switch e := ev.(type) {
	case TokenIssued:
		t.exists = true
		t.id, t.userID, t.domainName, t.kind, t.digest = e.TokenID, e.UserID, e.Domain, e.Kind, e.Digest
		t.description, t.issuedAt, t.expiresAt = e.Description, e.At, e.ExpiresAt
	case TokenRevoked:
		t.revokedAt = e.At
	default:
		return foreignEvent(ev, "token")
	}
	return nil
}

// isDigest: 64 lower-case hex digits.
func isDigest(s string) bool {
	if len(s) != tokenDigestLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Issue records a new token. The user (exists, active, its domain) is the
// caller's to check; an existing token stream is KindConflict.
func (t *Token) Issue(spec TokenSpec, at time.Time) ([]Event, error) {
	const op = "token.issue"
	p := &problems{op: op}
	if spec.ID == uuid.Nil {
		p.bad("id", "required")
	}
	if spec.UserID == uuid.Nil {
		p.bad("user_id", "required")
	}
	p.checkName("domain", spec.Domain)
	if !spec.Kind.Valid() {
		p.bad("kind", "must be login or bearer, not %q", spec.Kind)
	}
	if !isDigest(spec.Digest) {
		p.bad("digest", "must be %d lower-case hex digits", tokenDigestLength)
	}
	if len(spec.Description) > maxTokenDescription {
		p.bad("description", "longer than %d bytes", maxTokenDescription)
	} else {
		p.checkDescription("description", spec.Description)
	}
	p.checkAt(at)
	if !at.IsZero() {
		switch life := spec.ExpiresAt.Sub(at); {
		case life <= 0:
			p.bad("expires_at", "must be after the time of issue")
		case life > MaxTokenLifetime:
			p.bad("expires_at", "must be at most %s after the time of issue", MaxTokenLifetime)
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if t.exists {
		return nil, alreadyExists(op, "token")
	}
	return []Event{TokenIssued{TokenID: spec.ID, UserID: spec.UserID, Domain: spec.Domain, Kind: spec.Kind,
		Digest: spec.Digest, Description: spec.Description, ExpiresAt: spec.ExpiresAt, At: at}}, nil
}

// Revoke ends the token. Revoking a revoked token returns no events; one
// never issued is KindNotFound.
func (t *Token) Revoke(at time.Time) ([]Event, error) {
	const op = "token.revoke"
	switch {
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	case !t.exists:
		return nil, NotFound(op, "token")
	case t.Revoked():
		return nil, nil
	}
	return []Event{TokenRevoked{At: at}}, nil
}
