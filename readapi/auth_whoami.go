package readapi

import (
	"github.com/gofiber/fiber/v2"
)

// whoami handles GET /v1/auth/whoami: the caller as authentication
// resolved it (user, role, domain, access key, projects, method).
func (a *api) whoami(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	return c.JSON(who.Principal)
}
