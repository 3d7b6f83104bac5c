package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opForgetImage = "image.forget"

// forgetImage handles DELETE /v1/images/{id} (superadmins): sessions may
// no longer name the image; forgetting it again changes nothing.
func (a *api) forgetImage(c *fiber.Ctx) error {
	who, err := a.writing(c, opForgetImage)
	if err != nil {
		return err
	}
	ref, arch, err := readapi.ParseImageID(opForgetImage, c.Params("id"))
	if err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.ForgetImage.Handle(c.UserContext(), metadata(c, who), commands.ForgetImage{Actor: actor(who), Reference: ref, Architecture: arch})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
