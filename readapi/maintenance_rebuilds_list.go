package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/maintenance"
)

// listRebuilds handles GET /v1/maintenance/rebuilds (superadmins): the
// rebuilds the server remembers, the newest first, so a page opened
// while one runs finds it.
func (a *api) listRebuilds(c *fiber.Ctx) error {
	const op = "maintenance.rebuild.list"
	if err := superadminOnly(c, op, "reading the rebuilds"); err != nil {
		return err
	}
	return c.JSON(jobList[maintenance.Rebuild]{Items: a.Maintenance.ListRebuilds()})
}
