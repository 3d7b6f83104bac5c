package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateKeypairPolicy = "keypair-policy.create"

// createKeypairPolicyRequest is the body of POST /v1/keypair-policies: a
// name and the policy's limits.
type createKeypairPolicyRequest struct {
	Name string `json:"name"`
	domain.KeypairPolicySpec
}

// createKeypairPolicy handles POST /v1/keypair-policies (superadmins).
func (a *api) createKeypairPolicy(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateKeypairPolicy)
	if err != nil {
		return err
	}
	var req createKeypairPolicyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.CreateKeypairPolicy.Handle(c.UserContext(), metadata(c, who), commands.CreateKeypairPolicy{Actor: actor(who),
		Name: req.Name, Spec: req.KeypairPolicySpec})
	if err != nil {
		return err
	}
	c.Location("/v1/keypair-policies/" + req.Name)
	return c.Status(http.StatusCreated).JSON(written{Position: res.Position})
}
