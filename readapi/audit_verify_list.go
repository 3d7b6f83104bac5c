package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/maintenance"
)

// listVerifications handles GET /v1/audit/verify (superadmins and auditors): the
// verifications the server remembers, the newest first; the first done
// one holds the chain's last verified head.
func (a *api) listVerifications(c *fiber.Ctx) error {
	const op = "audit.verify.list"
	if err := MayVerifyAudit(c, op); err != nil {
		return err
	}
	return c.JSON(jobList[maintenance.Verification]{Items: a.Maintenance.ListVerifications()})
}
