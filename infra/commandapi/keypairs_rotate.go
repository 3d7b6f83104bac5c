package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opRotateSecret = "keypair.rotate-secret"

// rotateSecretResponse carries the new secret key, shown this once.
type rotateSecretResponse struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Position  uint64 `json:"position"`
}

// rotateKeypairSecret handles POST /v1/keypairs/{access_key}/rotate-secret
// (no body): a fresh secret key replaces the old one at once. Owners
// (role user) may rotate their own keypairs.
func (a *api) rotateKeypairSecret(c *fiber.Ctx) error {
	who, err := a.writing(c, opRotateSecret)
	if err != nil {
		return err
	}
	ak := c.Params("id")
	if err := a.KeypairScope(c, who, opRotateSecret, ak); err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.RotateKeypairSecret.Handle(c.UserContext(), metadata(c, who), commands.RotateKeypairSecret{Actor: actor(who), AccessKey: ak})
	if err != nil {
		return err
	}
	return c.JSON(rotateSecretResponse{AccessKey: ak, SecretKey: res.SecretKey, Position: res.Position})
}
