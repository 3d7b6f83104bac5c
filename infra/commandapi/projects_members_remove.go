package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

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
	d := readapi.DomainParam(c, who)
	if err := readapi.InDomain(c, who, opRemoveMember, "project", d); err != nil {
		return err
	}
	user, err := readapi.ParseUserID(c, opRemoveMember, "user_id")
	if err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.RemoveProjectMember.Handle(c.UserContext(), metadata(c, who), commands.RemoveProjectMember{Actor: actor(who),
		Domain: d, Project: c.Params("id"), UserID: user})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
