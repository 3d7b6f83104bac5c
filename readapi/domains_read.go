package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListDomains = "domain.list"
	opGetDomain   = "domain.get"
)

// listDomains handles GET /v1/domains: every domain for superadmins, the
// caller's own for everyone else.
func (a *api) listDomains(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListDomains)
	if err != nil {
		return err
	}
	if who.IsSuperadmin() {
		list, err := a.Tenancy.ListDomains(c.UserContext())
		if err != nil {
			return err
		}
		return c.JSON(items[tenancy.Domain]{Items: list})
	}
	d, err := a.Tenancy.GetDomain(c.UserContext(), who.Domain)
	if err != nil {
		return err
	}
	return c.JSON(items[tenancy.Domain]{Items: []tenancy.Domain{d}})
}

// getDomain handles GET /v1/domains/{name}: superadmins read any domain,
// everyone else its own; another domain is not found.
func (a *api) getDomain(c *fiber.Ctx) error {
	who, err := a.Reading(c, opGetDomain)
	if err != nil {
		return err
	}
	name := c.Params("id")
	if !who.IsSuperadmin() && name != who.Domain {
		return Hidden(c, opGetDomain, "domain")
	}
	d, err := a.Tenancy.GetDomain(c.UserContext(), name)
	if err != nil {
		return err
	}
	return c.JSON(d)
}
