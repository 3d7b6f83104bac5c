package readapi

import "github.com/gofiber/fiber/v2"

// getSystem handles GET /v1/system (superadmins): the version and start
// time, the event store (backend, DSN without credentials, head), the bus,
// the leases of the singleton process managers, every read model's
// position and lag, the data directory's free bytes and the Go version.
func (a *api) getSystem(c *fiber.Ctx) error {
	const op = "system.get"
	if err := superadminOnly(c, op, "describing the system"); err != nil {
		return err
	}
	s, err := a.Maintenance.System(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(s)
}
