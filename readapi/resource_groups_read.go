package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListResourceGroups = "resource-group.list"
	opGetResourceGroup   = "resource-group.get"
)

// listResourceGroups handles GET /v1/resource-groups: superadmins see
// every group with its whole access list; everyone else the groups their
// domain, projects or access key may use, with only those entries of the
// access list (other tenants' grants are not theirs to see).
func (a *api) listResourceGroups(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListResourceGroups)
	if err != nil {
		return err
	}
	list, err := a.Tenancy.ListResourceGroups(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]tenancy.ResourceGroup, 0, len(list))
	for _, g := range list {
		if v, ok := who.resourceGroup(g); ok {
			out = append(out, v)
		}
	}
	return c.JSON(items[tenancy.ResourceGroup]{Items: out})
}

// getResourceGroup handles GET /v1/resource-groups/{name}.
func (a *api) getResourceGroup(c *fiber.Ctx) error {
	who, err := a.Reading(c, opGetResourceGroup)
	if err != nil {
		return err
	}
	g, err := a.Tenancy.GetResourceGroup(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	v, ok := who.resourceGroup(g)
	if !ok {
		return Hidden(c, opGetResourceGroup, "resource group")
	}
	return c.JSON(v)
}

// resourceGroup is g as the caller may see it, and whether it may.
func (u caller) resourceGroup(g tenancy.ResourceGroup) (tenancy.ResourceGroup, bool) {
	if u.IsSuperadmin() {
		return g, true
	}
	mine := []domain.Grantee{}
	for _, e := range g.Access {
		if u.granted(e) {
			mine = append(mine, e)
		}
	}
	g.Access = mine
	return g, len(mine) > 0
}

// granted reports whether an access list entry names the caller: its
// domain, a project of its domain it reads (admins and monitors: any; users:
// theirs), or its access key.
func (u caller) granted(e domain.Grantee) bool {
	switch e.Kind {
	case domain.GranteeDomain:
		return e.Name == u.Domain
	case domain.GranteeProject:
		d, p, ok := domain.SplitProjectKey(e.Name)
		return ok && d == u.Domain && (u.ReadsDomain(d) || u.MemberOf(p))
	case domain.GranteeKeypair:
		return u.AccessKey != "" && strings.EqualFold(e.Name, u.AccessKey)
	}
	return false
}
