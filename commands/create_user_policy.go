package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateUserPolicy creates a user resource policy: folder count and
// quota scope size (superadmins only).
type CreateUserPolicy struct {
	Actor Principal
	Name  string
	Spec  domain.StoragePolicySpec
}

func (CreateUserPolicy) CommandName() string { return "user-policy.create" }

type createUserPolicyHandler struct {
	userPolicies repository[*domain.StoragePolicy]
	clock
}

// newCreateUserPolicyHandler builds the handler over what it uses.
func newCreateUserPolicyHandler(userPolicies repository[*domain.StoragePolicy], now clock) createUserPolicyHandler {
	return createUserPolicyHandler{userPolicies: userPolicies, clock: now}
}

// Handle creates the policy's stream; a policy of that name is
// KindConflict.
func (h createUserPolicyHandler) Handle(ctx context.Context, md Metadata, cmd CreateUserPolicy) (Result, error) {
	const op = "user-policy.create"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.userPolicies.update(ctx, domain.UserPolicyStream(cmd.Name), md, func(p *domain.StoragePolicy) ([]domain.Event, error) {
		return p.Create(cmd.Name, cmd.Spec, at)
	})
	return result(pos, err)
}
