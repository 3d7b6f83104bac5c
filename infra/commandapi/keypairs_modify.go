package commandapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

const opModifyKeypair = "keypair.modify"

// modifyKeypairRequest is the body of PATCH /v1/keypairs/{access_key}.
type modifyKeypairRequest struct {
	ResourcePolicy *string `json:"resource_policy"`
	RateLimit      *int    `json:"rate_limit"`
	// IsActive activates or deactivates the keypair (a deactivated one
	// signs nothing; the user's main keypair cannot be deactivated).
	IsActive *bool `json:"is_active"`
}

// modifyKeypair handles PATCH /v1/keypairs/{access_key} (superadmins, and
// admins of the owner's domain): ModifyKeypair for the policy and rate
// limit, SetKeypairActive for is_active.
func (a *api) modifyKeypair(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyKeypair)
	if err != nil {
		return err
	}
	ak := c.Params("id")
	if err := a.KeypairScope(c, who, opModifyKeypair, ak); err != nil {
		return err
	}
	var req modifyKeypairRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var pos uint64
	if req.ResourcePolicy != nil || req.RateLimit != nil || req.IsActive == nil {
		res, err := a.Commands.ModifyKeypair.Handle(c.UserContext(), metadata(c, who), commands.ModifyKeypair{Actor: actor(who),
			AccessKey: ak, ResourcePolicy: req.ResourcePolicy, RateLimit: req.RateLimit})
		if err != nil {
			return err
		}
		pos = res.Position
	}
	if req.IsActive != nil {
		res, err := a.Commands.SetKeypairActive.Handle(c.UserContext(), metadata(c, who), commands.SetKeypairActive{Actor: actor(who),
			AccessKey: ak, Active: *req.IsActive})
		if err != nil {
			return err
		}
		pos = max(pos, res.Position)
	}
	return c.JSON(written{Position: pos})
}
