package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyProjectPolicy changes a project resource policy's limits
// (superadmins only).
type ModifyProjectPolicy struct {
	Actor   Principal
	Name    string
	Changes domain.StoragePolicyChanges
}

func (ModifyProjectPolicy) CommandName() string { return "project-policy.modify" }

type modifyProjectPolicyHandler struct {
	projectPolicies repository[*domain.StoragePolicy]
	clock
}

// newModifyProjectPolicyHandler builds the handler over what it uses.
func newModifyProjectPolicyHandler(projectPolicies repository[*domain.StoragePolicy], now clock) modifyProjectPolicyHandler {
	return modifyProjectPolicyHandler{projectPolicies: projectPolicies, clock: now}
}

// Handle applies the changes (domain.StoragePolicy.Modify).
func (h modifyProjectPolicyHandler) Handle(ctx context.Context, md Metadata, cmd ModifyProjectPolicy) (Result, error) {
	const op = "project-policy.modify"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.projectPolicies.update(ctx, domain.ProjectPolicyStream(cmd.Name), md, func(p *domain.StoragePolicy) ([]domain.Event, error) {
		return p.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
