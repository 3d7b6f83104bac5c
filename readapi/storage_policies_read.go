package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

// listStoragePolicies handles GET /v1/{user,project}-policies: global,
// readable by every caller.
func (a *api) listStoragePolicies(scope storagePolicyScope) fiber.Handler {
	op := scope.kind + ".list"
	return func(c *fiber.Ctx) error {
		if _, err := a.Reading(c, op); err != nil {
			return err
		}
		list, err := scope.list(a, c.UserContext())
		if err != nil {
			return err
		}
		return c.JSON(items[tenancy.StoragePolicy]{Items: list})
	}
}

// getStoragePolicy handles GET /v1/{user,project}-policies/{name}.
func (a *api) getStoragePolicy(scope storagePolicyScope) fiber.Handler {
	op := scope.kind + ".get"
	return func(c *fiber.Ctx) error {
		if _, err := a.Reading(c, op); err != nil {
			return err
		}
		p, err := scope.get(a, c.UserContext(), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(p)
	}
}
