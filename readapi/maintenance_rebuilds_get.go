package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// getRebuild handles GET /v1/maintenance/rebuilds/{id} (superadmins): a
// rebuild's progress (position reached, head, events per second) and its
// end (done, or failed with the error).
func (a *api) getRebuild(c *fiber.Ctx) error {
	const op = "maintenance.rebuild.get"
	if err := superadminOnly(c, op, "reading a rebuild"); err != nil {
		return err
	}
	job, err := a.Maintenance.GetRebuild(strings.Clone(c.Params("id")))
	if err != nil {
		return err
	}
	return c.JSON(job)
}
