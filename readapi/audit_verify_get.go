package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// getVerification handles GET /v1/audit/verify/{id} (superadmins and auditors): a
// verification's progress, then the verified head or the first broken
// record.
func (a *api) getVerification(c *fiber.Ctx) error {
	const op = "audit.verify.get"
	if err := MayVerifyAudit(c, op); err != nil {
		return err
	}
	job, err := a.Maintenance.GetVerification(strings.Clone(c.Params("id")))
	if err != nil {
		return err
	}
	return c.JSON(job)
}
