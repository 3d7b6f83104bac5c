package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// AddProjectMember makes a user of the project's domain a member.
type AddProjectMember struct {
	Actor   Principal
	Domain  string
	Project string
	UserID  uuid.UUID
}

func (AddProjectMember) CommandName() string { return "project.add-member" }

type addProjectMemberHandler struct {
	projects repository[*domain.Project]
	users    repository[*domain.User]
	clock
}

// newAddProjectMemberHandler builds the handler over what it uses.
func newAddProjectMemberHandler(projects repository[*domain.Project], users repository[*domain.User], now clock) addProjectMemberHandler {
	return addProjectMemberHandler{projects: projects, users: users, clock: now}
}

// Handle checks that the user exists, is not deleted and belongs to the
// project's domain, then records the membership in the project's stream
// (which owns memberships). Adding a member again appends nothing. A user
// deleted at the same moment may still be added: membership of a deleted
// user grants nothing, since a deleted user cannot sign in.
func (h addProjectMemberHandler) Handle(ctx context.Context, md Metadata, cmd AddProjectMember) (Result, error) {
	const op = "project.add-member"
	if err := authorizeIn(op, "project", cmd.Actor, cmd.Domain); err != nil {
		return Result{}, err
	}
	if err := firstError(domain.CheckName(op, "domain", cmd.Domain), domain.CheckName(op, "project", cmd.Project)); err != nil {
		return Result{}, err
	}
	u, err := h.users.load(ctx, domain.UserStream(cmd.UserID))
	if err != nil {
		return Result{}, err
	}
	if err := u.agg.RequireLive(op); err != nil {
		return Result{}, err
	}
	if u.agg.Domain() != cmd.Domain {
		if !cmd.Actor.isSuperadmin() {
			return Result{}, domain.NotFound(op, "user")
		}
		return Result{}, domain.Errorf(op, domain.KindConflict, "the user belongs to another domain")
	}
	at := h.now()
	_, pos, err := h.projects.update(ctx, domain.ProjectStream(cmd.Domain, cmd.Project), md, func(p *domain.Project) ([]domain.Event, error) {
		return p.AddMember(cmd.UserID, at)
	})
	return result(pos, err)
}
