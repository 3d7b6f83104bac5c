package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/readapi"
)

const opStartRebuild = "maintenance.rebuild"

// startRebuildRequest is the body of POST /v1/maintenance/rebuilds.
type startRebuildRequest struct {
	ReadModel string `json:"read_model"`
}

// startRebuild handles POST /v1/maintenance/rebuilds (superadmins): it
// starts rebuilding one read model online and answers 202 with the job
// (GET /v1/maintenance/rebuilds/{id} follows it). An unknown read model is
// 400, a rebuild of it still running 409. The rebuild changes no domain
// state, so it appends no event; the access log records the request.
func (a *api) startRebuild(c *fiber.Ctx) error {
	if err := readapi.SuperadminOnly(c, opStartRebuild, "rebuilding a read model"); err != nil {
		return err
	}
	var req startRebuildRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.ReadModel == "" {
		return domain.Invalid(opStartRebuild, "read_model", "required")
	}
	job, err := a.Maintenance.StartRebuild(req.ReadModel)
	if err != nil {
		return err
	}
	c.Location("/v1/maintenance/rebuilds/" + job.ID)
	return c.Status(http.StatusAccepted).JSON(job)
}
