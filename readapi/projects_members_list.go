package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

const opListMembers = "project.members"

// listProjectMembers handles GET /v1/projects/{name}/members?domain=: who
// belongs to a project the caller may see.
func (a *api) listProjectMembers(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListMembers)
	if err != nil {
		return err
	}
	p, err := a.VisibleProject(c, who, opListMembers)
	if err != nil {
		return err
	}
	list, err := a.Tenancy.ProjectMembers(c.UserContext(), p.Domain, p.Name)
	if err != nil {
		return err
	}
	return c.JSON(items[tenancy.Member]{Items: list})
}
