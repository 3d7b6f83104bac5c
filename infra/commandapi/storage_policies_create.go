package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// createStoragePolicyRequest is the body of POST /v1/user-policies and
// /v1/project-policies.
type createStoragePolicyRequest struct {
	Name string `json:"name"`
	domain.StoragePolicySpec
}

// createStoragePolicy handles POST /v1/{user,project}-policies
// (superadmins).
func (a *api) createStoragePolicy(scope storagePolicyScope) fiber.Handler {
	op := scope.kind + ".create"
	return func(c *fiber.Ctx) error {
		who, err := a.writing(c, op)
		if err != nil {
			return err
		}
		var req createStoragePolicyRequest
		if err := decode(c, &req); err != nil {
			return err
		}
		res, err := scope.create(a, c.UserContext(), metadata(c, who), actor(who), req.Name, req.StoragePolicySpec)
		if err != nil {
			return err
		}
		c.Location("/v1/" + scope.path + "/" + req.Name)
		return c.Status(http.StatusCreated).JSON(written{Position: res.Position})
	}
}
