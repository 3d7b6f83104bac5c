package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListProjects = "project.list"
	opGetProject   = "project.get"
)

// listProjects handles GET /v1/projects?domain=: the projects of a domain
// (the caller's by default; superadmins without ?domain= see every
// project). Admins and monitors see their domain's projects, users the
// projects they belong to; another domain is not found.
func (a *api) listProjects(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListProjects)
	if err != nil {
		return err
	}
	d := c.Query("domain")
	if d == "" && !who.IsSuperadmin() {
		d = who.Domain
	}
	if d != "" {
		if err := InDomain(c, who, opListProjects, "domain", d); err != nil {
			return err
		}
	}
	list, err := a.Tenancy.ListProjects(c.UserContext(), d)
	if err != nil {
		return err
	}
	if !who.ReadsDomain(who.Domain) {
		mine := list[:0]
		for _, p := range list {
			if who.MemberOf(p.Name) {
				mine = append(mine, p)
			}
		}
		list = mine
	}
	return c.JSON(items[tenancy.Project]{Items: list})
}

// getProject handles GET /v1/projects/{name}?domain=.
func (a *api) getProject(c *fiber.Ctx) error {
	who, err := a.Reading(c, opGetProject)
	if err != nil {
		return err
	}
	p, err := a.VisibleProject(c, who, opGetProject)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// VisibleProject reads the project of a route, hiding one of another
// domain, and for users one they do not belong to.
func (a *API) VisibleProject(c *fiber.Ctx, who Caller, op string) (tenancy.Project, error) {
	d, name := DomainParam(c, who), c.Params("id")
	if err := InDomain(c, who, op, "project", d); err != nil {
		return tenancy.Project{}, err
	}
	if !who.ReadsDomain(d) && !who.MemberOf(name) {
		return tenancy.Project{}, Hidden(c, op, "project")
	}
	return a.Tenancy.GetProject(c.UserContext(), d, name)
}
