package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListKeypairPolicies = "keypair-policy.list"
	opGetKeypairPolicy    = "keypair-policy.get"
)

// listKeypairPolicies handles GET /v1/keypair-policies. Policies are
// global and carry no tenant's data: every caller may read them.
func (a *api) listKeypairPolicies(c *fiber.Ctx) error {
	if _, err := a.Reading(c, opListKeypairPolicies); err != nil {
		return err
	}
	list, err := a.Tenancy.ListKeypairPolicies(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(items[tenancy.KeypairPolicy]{Items: list})
}

// getKeypairPolicy handles GET /v1/keypair-policies/{name}.
func (a *api) getKeypairPolicy(c *fiber.Ctx) error {
	if _, err := a.Reading(c, opGetKeypairPolicy); err != nil {
		return err
	}
	p, err := a.Tenancy.GetKeypairPolicy(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(p)
}
