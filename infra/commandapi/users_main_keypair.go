package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

const opSetMainKeypair = "user.set-main-keypair"

// setMainKeypairRequest is the body of PUT /v1/users/{id}/main-keypair.
type setMainKeypairRequest struct {
	AccessKey string `json:"access_key"`
}

// setMainKeypair handles PUT /v1/users/{id}/main-keypair: one of the
// user's active keypairs becomes its main one (whose policy is the
// user's per-user limit).
func (a *api) setMainKeypair(c *fiber.Ctx) error {
	who, err := a.writing(c, opSetMainKeypair)
	if err != nil {
		return err
	}
	id, err := readapi.ParseUserID(c, opSetMainKeypair, "id")
	if err != nil {
		return err
	}
	if err := a.UserScope(c, who, opSetMainKeypair, id); err != nil {
		return err
	}
	var req setMainKeypairRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.SetMainKeypair.Handle(c.UserContext(), metadata(c, who), commands.SetMainKeypair{Actor: actor(who),
		UserID: id, AccessKey: req.AccessKey})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
