package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateResourceGroup creates a resource group, active and with an empty
// access list (superadmins only).
type CreateResourceGroup struct {
	Actor Principal
	Name  string
	Spec  domain.ResourceGroupSpec
}

func (CreateResourceGroup) CommandName() string { return "resource-group.create" }

type createResourceGroupHandler struct {
	resourceGroups repository[*domain.ResourceGroup]
	clock
}

// newCreateResourceGroupHandler builds the handler over what it uses.
func newCreateResourceGroupHandler(resourceGroups repository[*domain.ResourceGroup], now clock) createResourceGroupHandler {
	return createResourceGroupHandler{resourceGroups: resourceGroups, clock: now}
}

// Handle creates the group's stream; a group of that name is
// KindConflict.
func (h createResourceGroupHandler) Handle(ctx context.Context, md Metadata, cmd CreateResourceGroup) (Result, error) {
	const op = "resource-group.create"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.resourceGroups.update(ctx, domain.ResourceGroupStream(cmd.Name), md, func(r *domain.ResourceGroup) ([]domain.Event, error) {
		return r.Create(cmd.Name, cmd.Spec, at)
	})
	return result(pos, err)
}
