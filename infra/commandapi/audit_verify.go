package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/readapi"
)

// startVerification handles POST /v1/audit/verify (superadmins and auditors): it
// starts verifying the audit trail's hash chain from its first record and
// answers 202 with the job (GET /v1/audit/verify/{id} gives its progress,
// then the verified head or the first broken record). A POST because the
// verification is a job that runs on after the answer; one runs at a time
// (a POST while one runs answers that one).
func (a *api) startVerification(c *fiber.Ctx) error {
	const op = "audit.verify"
	if err := readapi.MayVerifyAudit(c, op); err != nil {
		return err
	}
	job, err := a.Maintenance.StartVerification()
	if err != nil {
		return err
	}
	c.Location("/v1/audit/verify/" + job.ID)
	return c.Status(http.StatusAccepted).JSON(job)
}
