package readapi

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/maintenance"
)

// Maintenance is what the superadmins' Information and Maintenance routes
// read (infra/maintenance.Service): the system's description and the
// progress of rebuilds and audit verifications, which infra/commandapi
// starts.
type Maintenance interface {
	System(ctx context.Context) (maintenance.System, error)
	GetRebuild(id string) (maintenance.Rebuild, error)
	ListRebuilds() []maintenance.Rebuild
	GetVerification(id string) (maintenance.Verification, error)
	ListVerifications() []maintenance.Verification
}

// mountMaintenance registers the maintenance queries when Deps.Maintenance
// is set.
func (a *API) mountMaintenance(v1 fiber.Router) {
	if a.Maintenance == nil {
		return
	}
	v1.Get("/system", a.getSystem)
	v1.Get("/maintenance/rebuilds", a.listRebuilds)
	v1.Get("/maintenance/rebuilds/:id", a.getRebuild)
	v1.Get("/audit/verify", a.listVerifications)
	v1.Get("/audit/verify/:id", a.getVerification)
}

// jobList is the answer of the job lists: the jobs the server remembers
// (every running one and the last finished ones), the newest first.
type jobList[J any] struct {
	Items []J `json:"items"`
}

// superadminOnly refuses every caller but superadmins (KindForbidden): the
// maintenance routes span every tenant and the whole server.
func superadminOnly(c *fiber.Ctx, op, what string) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	if !who.IsSuperadmin() {
		return domain.Errorf(op, domain.KindForbidden, "%s needs the superadmin role", what)
	}
	return nil
}

// SuperadminOnly is superadminOnly for the command endpoints that start
// maintenance jobs.
func SuperadminOnly(c *fiber.Ctx, op, what string) error { return superadminOnly(c, op, what) }
