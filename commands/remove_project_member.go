package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// RemoveProjectMember ends a user's membership of a project.
type RemoveProjectMember struct {
	Actor   Principal
	Domain  string
	Project string
	UserID  uuid.UUID
}

func (RemoveProjectMember) CommandName() string { return "project.remove-member" }

type removeProjectMemberHandler struct {
	projects repository[*domain.Project]
	clock
}

// newRemoveProjectMemberHandler builds the handler over what it uses.
func newRemoveProjectMemberHandler(projects repository[*domain.Project], now clock) removeProjectMemberHandler {
	return removeProjectMemberHandler{projects: projects, clock: now}
}

// Handle records the removal; removing a non-member appends nothing.
func (h removeProjectMemberHandler) Handle(ctx context.Context, md Metadata, cmd RemoveProjectMember) (Result, error) {
	const op = "project.remove-member"
	if err := authorizeIn(op, "project", cmd.Actor, cmd.Domain); err != nil {
		return Result{}, err
	}
	if err := firstError(domain.CheckName(op, "domain", cmd.Domain), domain.CheckName(op, "project", cmd.Project)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.projects.update(ctx, domain.ProjectStream(cmd.Domain, cmd.Project), md, func(p *domain.Project) ([]domain.Event, error) {
		return p.RemoveMember(cmd.UserID, at)
	})
	return result(pos, err)
}
