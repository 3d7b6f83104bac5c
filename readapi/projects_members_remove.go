package readapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opRemoveMember = "project.remove-member"

// removeProjectMember handles DELETE /v1/projects/{name}/members/{user_id}?domain=:
// the membership ends; removing a non-member changes nothing.
func (a *api) removeProjectMember(c *fiber.Ctx) error {
	who, err := a.writing(c, opRemoveMember)
	if err != nil {
		return err
	}
	d := domainParam(c, who)
	if err := inDomain(c, who, opRemoveMember, "project", d); err != nil {
		return err
	}
	user, err := userID(c, opRemoveMember, "user_id")
	if err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.RemoveProjectMember.Handle(c.UserContext(), who.metadata(c), commands.RemoveProjectMember{Actor: who.actor(),
		Domain: d, Project: c.Params("id"), UserID: user})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
