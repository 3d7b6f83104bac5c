package tenancy

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Token is one API token as the read model shows it: never the token,
// never its digest.
type Token struct {
	ID          uuid.UUID        `json:"id"`
	UserID      uuid.UUID        `json:"user_id"`
	Kind        domain.TokenKind `json:"kind"`
	Description string           `json:"description"`
	IssuedAt    time.Time        `json:"issued_at"`
	ExpiresAt   time.Time        `json:"expires_at"`
	RevokedAt   *time.Time       `json:"revoked_at,omitempty"`
	Position    uint64           `json:"position"`
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return t.RevokedAt != nil }

// TokenGrant is what authenticating a bearer token needs: the token and
// who it speaks for (the holder's e-mail, role, domain, status and main
// access key). TokenByDigest reads one.
type TokenGrant struct {
	Token
	Email         string            `json:"-"`
	Role          domain.Role       `json:"-"`
	Domain        string            `json:"-"`
	UserStatus    domain.UserStatus `json:"-"`
	MainAccessKey string            `json:"-"`
}

// TokenByDigest returns the token whose SHA-256 digest (lower-case hex)
// is digest, with its holder. Expired and revoked tokens are returned
// too: the caller checks them (and says which).
func (m *ReadModel) TokenByDigest(ctx context.Context, digest string) (TokenGrant, error) {
	return one(ctx, m, "tenancy.token-by-digest", "token", func(r projections.Row) (TokenGrant, error) {
		var (
			g            TokenGrant
			role, status string
		)
		t, err := scanTokenWith(r, &g.Email, &role, &g.Domain, &status, &g.MainAccessKey)
		g.Token, g.Role, g.UserStatus = t, domain.Role(role), domain.UserStatus(status)
		return g, err
	}, m.sql.tokenByDigest, digest)
}

// GetToken returns one token.
func (m *ReadModel) GetToken(ctx context.Context, id uuid.UUID) (Token, error) {
	return one(ctx, m, "tenancy.get-token", "token", scanToken, m.sql.getToken, id.String())
}

// ListTokens returns a user's tokens, oldest first (expired and revoked
// ones included).
func (m *ReadModel) ListTokens(ctx context.Context, user uuid.UUID) ([]Token, error) {
	return list(ctx, m, "tenancy.list-tokens", scanToken, m.sql.listTokens, user.String())
}

// HasImage reports whether an image with this reference is registered,
// for any architecture.
func (m *ReadModel) HasImage(ctx context.Context, reference string) (bool, error) {
	n, err := one(ctx, m, "tenancy.has-image", "image", func(r projections.Row) (int64, error) {
		var n int64
		return n, r.Scan(&n)
	}, m.sql.hasImage, reference)
	return n > 0, err
}

func scanToken(r projections.Row) (Token, error) { return scanTokenWith(r) }

func scanTokenWith(r projections.Row, extra ...any) (Token, error) {
	var (
		t                        Token
		id, user, kind           string
		issued, expires, revoked projections.NullTime
		position                 int64
	)
	dest := append([]any{&id, &user, &kind, &t.Description, &issued, &expires, &revoked, &position}, extra...)
	if err := r.Scan(dest...); err != nil {
		return t, err
	}
	t.Kind, t.IssuedAt, t.ExpiresAt, t.RevokedAt, t.Position = domain.TokenKind(kind), issued.Time, expires.Time, revoked.Ptr(), uint64(position)
	var err error
	if t.ID, err = uuid.Parse(id); err != nil {
		return t, err
	}
	t.UserID, err = uuid.Parse(user)
	return t, err
}
