package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyUserPolicy changes a user resource policy's limits
// (superadmins only).
type ModifyUserPolicy struct {
	Actor   Principal
	Name    string
	Changes domain.StoragePolicyChanges
}

func (ModifyUserPolicy) CommandName() string { return "user-policy.modify" }

type modifyUserPolicyHandler struct {
	userPolicies repository[*domain.StoragePolicy]
	clock
}

// newModifyUserPolicyHandler builds the handler over what it uses.
func newModifyUserPolicyHandler(userPolicies repository[*domain.StoragePolicy], now clock) modifyUserPolicyHandler {
	return modifyUserPolicyHandler{userPolicies: userPolicies, clock: now}
}

// Handle applies the changes (domain.StoragePolicy.Modify).
func (h modifyUserPolicyHandler) Handle(ctx context.Context, md Metadata, cmd ModifyUserPolicy) (Result, error) {
	const op = "user-policy.modify"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.userPolicies.update(ctx, domain.UserPolicyStream(cmd.Name), md, func(p *domain.StoragePolicy) ([]domain.Event, error) {
		return p.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
