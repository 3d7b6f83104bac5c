package commandapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// modifyStoragePolicyRequest is the body of PATCH
// /v1/{user,project}-policies/{name}.
type modifyStoragePolicyRequest struct {
	MaxVFolderCount   *int   `json:"max_vfolder_count"`
	MaxQuotaScopeSize *int64 `json:"max_quota_scope_size"`
}

// modifyStoragePolicy handles PATCH /v1/{user,project}-policies/{name}
// (superadmins).
func (a *api) modifyStoragePolicy(scope storagePolicyScope) fiber.Handler {
	op := scope.kind + ".modify"
	return func(c *fiber.Ctx) error {
		who, err := a.writing(c, op)
		if err != nil {
			return err
		}
		var req modifyStoragePolicyRequest
		if err := decode(c, &req); err != nil {
			return err
		}
		res, err := scope.modify(a, c.UserContext(), metadata(c, who), actor(who), c.Params("id"),
			domain.StoragePolicyChanges{MaxVFolderCount: req.MaxVFolderCount, MaxQuotaScopeSize: req.MaxQuotaScopeSize})
		if err != nil {
			return err
		}
		return c.JSON(written{Position: res.Position})
	}
}
