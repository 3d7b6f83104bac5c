package commandapi

import (
	"errors"
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opDeleteToken = "token.revoke"

// deleteToken handles DELETE /v1/auth/tokens/{id}: the token stops
// working (the answer waits until it has). Its holder may revoke it, and
// whoever administers the holder's domain; another tenant's token is not
// found.
func (a *api) deleteToken(c *fiber.Ctx) error {
	who, err := a.writing(c, opDeleteToken)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return domain.NotFound(opDeleteToken, "token")
	}
	t, err := a.Tenancy.GetToken(c.UserContext(), id)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	if err == nil && t.UserID != who.ID && !who.IsSuperadmin() {
		holder, err := a.Tenancy.GetUser(c.UserContext(), t.UserID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if holder.Domain != who.Domain {
			return readapi.Hidden(c, opDeleteToken, "token")
		}
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.RevokeToken.Handle(c.UserContext(), metadata(c, who), commands.RevokeToken{Actor: actor(who), TokenID: id})
	if err != nil {
		return err
	}
	a.settle(c, res.Position)
	return c.JSON(written{Position: res.Position})
}
