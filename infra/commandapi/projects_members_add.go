package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

const opAddMember = "project.add-member"

// addProjectMember handles PUT /v1/projects/{name}/members/{user_id}?domain=
// (no body): the user becomes a member; adding a member again changes
// nothing.
func (a *api) addProjectMember(c *fiber.Ctx) error {
	who, err := a.writing(c, opAddMember)
	if err != nil {
		return err
	}
	d := readapi.DomainParam(c, who)
	if err := readapi.InDomain(c, who, opAddMember, "project", d); err != nil {
		return err
	}
	user, err := readapi.ParseUserID(c, opAddMember, "user_id")
	if err != nil {
		return err
	}
	res, err := a.Commands.AddProjectMember.Handle(c.UserContext(), metadata(c, who), commands.AddProjectMember{Actor: actor(who),
		Domain: d, Project: c.Params("id"), UserID: user})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
