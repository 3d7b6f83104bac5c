package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyProject changes a project's description, total resource slots,
// allowed storage hosts, resource policy or is_active.
type ModifyProject struct {
	Actor   Principal
	Domain  string
	Name    string
	Changes domain.ProjectChanges
}

func (ModifyProject) CommandName() string { return "project.modify" }

type modifyProjectHandler struct {
	projects        repository[*domain.Project]
	projectPolicies repository[*domain.StoragePolicy]
	clock
}

// newModifyProjectHandler builds the handler over what it uses.
func newModifyProjectHandler(projects repository[*domain.Project], projectPolicies repository[*domain.StoragePolicy], now clock) modifyProjectHandler {
	return modifyProjectHandler{projects: projects, projectPolicies: projectPolicies, clock: now}
}

// Handle checks a newly named policy exists, then applies the changes
// (domain.Project.Modify).
func (h modifyProjectHandler) Handle(ctx context.Context, md Metadata, cmd ModifyProject) (Result, error) {
	const op = "project.modify"
	if err := authorizeIn(op, "project", cmd.Actor, cmd.Domain); err != nil {
		return Result{}, err
	}
	if err := firstError(domain.CheckName(op, "domain", cmd.Domain), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	if p := cmd.Changes.ResourcePolicy; p != nil {
		if err := requirePolicy(ctx, h.projectPolicies, op, "resource_policy", domain.ProjectPolicyStream(*p), *p); err != nil {
			return Result{}, err
		}
	}
	at := h.now()
	_, pos, err := h.projects.update(ctx, domain.ProjectStream(cmd.Domain, cmd.Name), md, func(p *domain.Project) ([]domain.Event, error) {
		return p.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
