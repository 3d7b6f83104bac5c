package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opRegisterImage = "image.register"

// registerImageRequest is the body of POST /v1/images: the reference
// (registry/name:tag), the architecture (x86_64 by default; amd64 and
// arm64 are aliases) and what is known of the image.
type registerImageRequest struct {
	Reference    string `json:"reference"`
	Architecture string `json:"architecture"`
	domain.ImageSpec
}

// registerImageResponse names the image.
type registerImageResponse struct {
	ID       string `json:"id"`
	Position uint64 `json:"position"`
}

// registerImage handles POST /v1/images (superadmins).
func (a *api) registerImage(c *fiber.Ctx) error {
	who, err := a.writing(c, opRegisterImage)
	if err != nil {
		return err
	}
	var req registerImageRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.Architecture == "" {
		req.Architecture = readapi.DefaultArchitecture
	}
	res, err := a.Commands.RegisterImage.Handle(c.UserContext(), metadata(c, who), commands.RegisterImage{Actor: actor(who),
		Reference: req.Reference, Architecture: req.Architecture, Spec: req.ImageSpec})
	if err != nil {
		return err
	}
	id := readapi.ImageID(req.Reference, domain.NormalizeArchitecture(req.Architecture))
	c.Location("/v1/images/" + id)
	return c.Status(http.StatusCreated).JSON(registerImageResponse{ID: id, Position: res.Position})
}
