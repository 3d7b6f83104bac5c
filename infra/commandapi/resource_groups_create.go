package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateResourceGroup = "resource-group.create"

// createResourceGroupRequest is the body of POST /v1/resource-groups: a
// name and the group's settings.
type createResourceGroupRequest struct {
	Name string `json:"name"`
	domain.ResourceGroupSpec
}

// createResourceGroup handles POST /v1/resource-groups (superadmins). The
// group starts active, with an empty access list.
func (a *api) createResourceGroup(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateResourceGroup)
	if err != nil {
		return err
	}
	var req createResourceGroupRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.CreateResourceGroup.Handle(c.UserContext(), metadata(c, who), commands.CreateResourceGroup{Actor: actor(who),
		Name: req.Name, Spec: req.ResourceGroupSpec})
	if err != nil {
		return err
	}
	c.Location("/v1/resource-groups/" + req.Name)
	return c.Status(http.StatusCreated).JSON(written{Position: res.Position})
}
