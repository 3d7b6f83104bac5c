package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyResourceGroup changes a resource group's settings (superadmins
// only).
type ModifyResourceGroup struct {
	Actor   Principal
	Name    string
	Changes domain.ResourceGroupChanges
}

func (ModifyResourceGroup) CommandName() string { return "resource-group.modify" }

type modifyResourceGroupHandler struct {
	resourceGroups repository[*domain.ResourceGroup]
	clock
}

// newModifyResourceGroupHandler builds the handler over what it uses.
func newModifyResourceGroupHandler(resourceGroups repository[*domain.ResourceGroup], now clock) modifyResourceGroupHandler {
	return modifyResourceGroupHandler{resourceGroups: resourceGroups, clock: now}
}

// Handle applies the changes (domain.ResourceGroup.Modify).
func (h modifyResourceGroupHandler) Handle(ctx context.Context, md Metadata, cmd ModifyResourceGroup) (Result, error) {
	const op = "resource-group.modify"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.resourceGroups.update(ctx, domain.ResourceGroupStream(cmd.Name), md, func(r *domain.ResourceGroup) ([]domain.Event, error) {
		return r.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
