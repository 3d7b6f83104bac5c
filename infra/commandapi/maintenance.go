package commandapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/maintenance"
)

// Maintenance starts the superadmins' maintenance jobs
// (infra/maintenance.Service); readapi serves their progress.
type Maintenance interface {
	StartRebuild(readModel string) (maintenance.Rebuild, error)
	StartVerification() (maintenance.Verification, error)
}

// mountMaintenance registers the maintenance commands when
// Deps.Maintenance is set.
func (a *API) mountMaintenance(v1 fiber.Router) {
	if a.Maintenance == nil {
		return
	}
	v1.Post("/maintenance/rebuilds", a.startRebuild)
	v1.Post("/audit/verify", a.startVerification)
}
