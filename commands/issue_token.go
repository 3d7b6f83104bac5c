package commands

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// IssueToken records a new API token for a user: a login token (the
// Web-UI, after an e-mail and password check) or a bearer token for
// scripts. The caller generates the token (infra/auth/token) and passes
// only its digest; the token itself is never written anywhere.
//
// A user may issue tokens for itself, whatever its role; superadmins for
// anyone. Anyone else gets KindForbidden for a user of its own domain and
// KindNotFound for one elsewhere.
type IssueToken struct {
	Actor       Principal
	UserID      uuid.UUID
	Kind        domain.TokenKind
	Digest      string
	Description string
	ExpiresAt   time.Time
}

func (IssueToken) CommandName() string { return "token.issue" }

// IssueTokenResult names the new token.
type IssueTokenResult struct {
	TokenID  uuid.UUID
	Position uint64
}

type issueTokenHandler struct {
	users  repository[*domain.User]
	tokens repository[*domain.Token]
	newID  func() uuid.UUID
	clock
}

// newIssueTokenHandler builds the handler over what it uses.
func newIssueTokenHandler(users repository[*domain.User], tokens repository[*domain.Token], newID func() uuid.UUID, now clock) issueTokenHandler {
	return issueTokenHandler{users: users, tokens: tokens, newID: newID, clock: now}
}

// Handle checks the user (exists, active) and the actor's right, then
// creates the token's stream under a fresh id.
func (h issueTokenHandler) Handle(ctx context.Context, md Metadata, cmd IssueToken) (IssueTokenResult, error) {
	const op = "token.issue"
	u, err := h.users.load(ctx, domain.UserStream(cmd.UserID))
	if err != nil {
		return IssueTokenResult{}, err
	}
	if !u.agg.Exists() {
		return IssueTokenResult{}, domain.NotFound(op, "user")
	}
	if cmd.Actor.UserID != cmd.UserID && !cmd.Actor.isSuperadmin() {
		if cmd.Actor.Domain == u.agg.Domain() {
			return IssueTokenResult{}, domain.Errorf(op, domain.KindForbidden, "only superadmins issue tokens for other users")
		}
		return IssueTokenResult{}, domain.NotFound(op, "user")
	}
	if u.agg.Status() != domain.UserActive {
		return IssueTokenResult{}, domain.Errorf(op, domain.KindForbidden, "the user is %s", u.agg.Status())
	}
	id := h.newID()
	at := h.now()
	spec := domain.TokenSpec{ID: id, UserID: cmd.UserID, Domain: u.agg.Domain(), Kind: cmd.Kind, Digest: cmd.Digest,
		Description: cmd.Description, ExpiresAt: cmd.ExpiresAt.UTC()}
	_, pos, err := h.tokens.update(ctx, domain.TokenStream(id), md, func(t *domain.Token) ([]domain.Event, error) {
		return t.Issue(spec, at)
	})
	if err != nil {
		return IssueTokenResult{}, err
	}
	return IssueTokenResult{TokenID: id, Position: pos}, nil
}
