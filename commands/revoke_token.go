package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// RevokeToken ends an API token at once. Its holder may revoke it, and so
// may whoever administers the holder's domain (superadmins everywhere);
// only superadmins revoke a superadmin's tokens.
type RevokeToken struct {
	Actor   Principal
	TokenID uuid.UUID
}

func (RevokeToken) CommandName() string { return "token.revoke" }

type revokeTokenHandler struct {
	users  repository[*domain.User]
	tokens repository[*domain.Token]
	clock
}

// newRevokeTokenHandler builds the handler over what it uses.
func newRevokeTokenHandler(users repository[*domain.User], tokens repository[*domain.Token], now clock) revokeTokenHandler {
	return revokeTokenHandler{users: users, tokens: tokens, clock: now}
}

// Handle records token.revoked; revoking a revoked token appends nothing.
func (h revokeTokenHandler) Handle(ctx context.Context, md Metadata, cmd RevokeToken) (Result, error) {
	const op = "token.revoke"
	l, err := h.tokens.load(ctx, domain.TokenStream(cmd.TokenID))
	if err != nil {
		return Result{}, err
	}
	t := l.agg
	if !t.Exists() {
		return Result{}, domain.NotFound(op, "token")
	}
	if t.UserID() != cmd.Actor.UserID {
		if err := authorizeIn(op, "token", cmd.Actor, t.Domain()); err != nil {
			return Result{}, err
		}
		owner, err := h.users.load(ctx, domain.UserStream(t.UserID()))
		if err != nil {
			return Result{}, err
		}
		if reservedToSuperadmins(owner.agg.Role()) && !cmd.Actor.isSuperadmin() {
			return Result{}, domain.Errorf(op, domain.KindForbidden, "only superadmins can revoke a %s's tokens", owner.agg.Role())
		}
	}
	at := h.now()
	_, pos, err := h.tokens.update(ctx, domain.TokenStream(cmd.TokenID), md, func(t *domain.Token) ([]domain.Event, error) {
		return t.Revoke(at)
	})
	return result(pos, err)
}
