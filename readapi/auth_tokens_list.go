package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/projections/tenancy"
)

const opListTokens = "token.list"

// listTokens handles GET /v1/auth/tokens: the caller's own tokens (login
// and bearer, expired and revoked ones too), never the tokens themselves.
func (a *api) listTokens(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListTokens)
	if err != nil {
		return err
	}
	list, err := a.Tenancy.ListTokens(c.UserContext(), who.ID)
	if err != nil {
		return err
	}
	return c.JSON(items[tenancy.Token]{Items: list})
}
