package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// RevokeResourceGroupAccess removes a grantee from a resource group's
// access list (superadmins only). Sessions already placed keep running.
type RevokeResourceGroupAccess struct {
	Actor         Principal
	ResourceGroup string
	Grantee       domain.Grantee
}

func (RevokeResourceGroupAccess) CommandName() string { return "resource-group.revoke" }

type revokeResourceGroupAccessHandler struct {
	resourceGroups repository[*domain.ResourceGroup]
	clock
}

// newRevokeResourceGroupAccessHandler builds the handler over what it uses.
func newRevokeResourceGroupAccessHandler(resourceGroups repository[*domain.ResourceGroup], now clock) revokeResourceGroupAccessHandler {
	return revokeResourceGroupAccessHandler{resourceGroups: resourceGroups, clock: now}
}

// Handle records the revocation; revoking what was not granted appends
// nothing.
func (h revokeResourceGroupAccessHandler) Handle(ctx context.Context, md Metadata, cmd RevokeResourceGroupAccess) (Result, error) {
	const op = "resource-group.revoke"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "resource_group", cmd.ResourceGroup)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.resourceGroups.update(ctx, domain.ResourceGroupStream(cmd.ResourceGroup), md, func(r *domain.ResourceGroup) ([]domain.Event, error) {
		return r.Revoke(cmd.Grantee, at)
	})
	return result(pos, err)
}
