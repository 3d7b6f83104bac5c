package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateProject creates a project in a domain (superadmins, and admins of
// that domain).
type CreateProject struct {
	Actor Principal
	Spec  domain.ProjectSpec
}

func (CreateProject) CommandName() string { return "project.create" }

type createProjectHandler struct {
	domains         repository[*domain.Domain]
	projects        repository[*domain.Project]
	projectPolicies repository[*domain.StoragePolicy]
	clock
}

// newCreateProjectHandler builds the handler over what it uses.
func newCreateProjectHandler(domains repository[*domain.Domain], projects repository[*domain.Project], projectPolicies repository[*domain.StoragePolicy], now clock) createProjectHandler {
	return createProjectHandler{domains: domains, projects: projects, projectPolicies: projectPolicies, clock: now}
}

// Handle checks that the domain exists and is active and that the
// project policy, if named, exists, then creates the project's stream; a
// project of that name in the domain is KindConflict. The domain is read,
// not written: a domain deactivated at the same moment may still get this
// project.
func (h createProjectHandler) Handle(ctx context.Context, md Metadata, cmd CreateProject) (Result, error) {
	const op = "project.create"
	spec := cmd.Spec
	if err := authorizeIn(op, "domain", cmd.Actor, spec.Domain); err != nil {
		return Result{}, err
	}
	if err := firstError(domain.CheckName(op, "domain", spec.Domain), domain.CheckName(op, "name", spec.Name)); err != nil {
		return Result{}, err
	}
	d, err := h.domains.load(ctx, domain.DomainStream(spec.Domain))
	if err != nil {
		return Result{}, err
	}
	if err := d.agg.RequireActive(op); err != nil {
		return Result{}, err
	}
	if err := requirePolicy(ctx, h.projectPolicies, op, "resource_policy", domain.ProjectPolicyStream(spec.ResourcePolicy), spec.ResourcePolicy); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.projects.update(ctx, domain.ProjectStream(spec.Domain, spec.Name), md, func(p *domain.Project) ([]domain.Event, error) {
		return p.Create(spec, at)
	})
	return result(pos, err)
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
