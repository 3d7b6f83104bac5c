package readapi

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListKeypairs = "keypair.list"
	opGetKeypair   = "keypair.get"
)

// listKeypairs handles GET /v1/keypairs?user_id=: superadmins list every
// keypair, admins and monitors their domain's, users their own. Secret
// keys are never listed.
func (a *api) listKeypairs(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListKeypairs)
	if err != nil {
		return err
	}
	var f tenancy.KeypairFilter
	if raw := c.Query("user_id"); raw != "" {
		if f.UserID, err = uuid.Parse(raw); err != nil {
			return domain.Invalid(opListKeypairs, "user_id", "not a user id")
		}
	}
	switch {
	case who.IsSuperadmin():
	case who.ReadsDomain(who.Domain):
		f.Domain = who.Domain
	default:
		if f.UserID != uuid.Nil && f.UserID != who.ID {
			return Hidden(c, opListKeypairs, "user")
		}
		f.UserID = who.ID
	}
	list, err := a.Tenancy.ListKeypairs(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.JSON(items[tenancy.Keypair]{Items: list})
}

// getKeypair handles GET /v1/keypairs/{access_key}.
func (a *api) getKeypair(c *fiber.Ctx) error {
	who, err := a.Reading(c, opGetKeypair)
	if err != nil {
		return err
	}
	k, err := a.Tenancy.GetKeypair(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	if k.UserID != who.ID && !who.ReadsDomain(k.Domain) {
		return Hidden(c, opGetKeypair, "keypair")
	}
	return c.JSON(k)
}
