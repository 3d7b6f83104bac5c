package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateProjectPolicy creates a project resource policy: folder count and
// quota scope size (superadmins only).
type CreateProjectPolicy struct {
	Actor Principal
	Name  string
	Spec  domain.StoragePolicySpec
}

func (CreateProjectPolicy) CommandName() string { return "project-policy.create" }

type createProjectPolicyHandler struct {
	projectPolicies repository[*domain.StoragePolicy]
	clock
}

// newCreateProjectPolicyHandler builds the handler over what it uses.
func newCreateProjectPolicyHandler(projectPolicies repository[*domain.StoragePolicy], now clock) createProjectPolicyHandler {
	return createProjectPolicyHandler{projectPolicies: projectPolicies, clock: now}
}

// Handle creates the policy's stream; a policy of that name is
// KindConflict.
func (h createProjectPolicyHandler) Handle(ctx context.Context, md Metadata, cmd CreateProjectPolicy) (Result, error) {
	const op = "project-policy.create"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.projectPolicies.update(ctx, domain.ProjectPolicyStream(cmd.Name), md, func(p *domain.StoragePolicy) ([]domain.Event, error) {
		return p.Create(cmd.Name, cmd.Spec, at)
	})
	return result(pos, err)
}
