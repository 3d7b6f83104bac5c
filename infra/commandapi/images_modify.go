package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyImage = "image.modify"

// modifyImageRequest is the body of PATCH /v1/images/{id}.
type modifyImageRequest struct {
	Labels           *map[string]string    `json:"labels"`
	MinResourceSlots *domain.Slots         `json:"min_resource_slots"`
	MaxResourceSlots *domain.Slots         `json:"max_resource_slots"`
	ServicePorts     *[]domain.ServicePort `json:"service_ports"`
}

// modifyImage handles PATCH /v1/images/{id} (superadmins).
func (a *api) modifyImage(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyImage)
	if err != nil {
		return err
	}
	ref, arch, err := readapi.ParseImageID(opModifyImage, c.Params("id"))
	if err != nil {
		return err
	}
	var req modifyImageRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyImage.Handle(c.UserContext(), metadata(c, who), commands.ModifyImage{Actor: actor(who),
		Reference: ref, Architecture: arch, Changes: domain.ImageChanges{Labels: req.Labels, MinResourceSlots: req.MinResourceSlots,
			MaxResourceSlots: req.MaxResourceSlots, ServicePorts: req.ServicePorts}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
