package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateDomain = "domain.create"

// createDomainRequest is the body of POST /v1/domains.
type createDomainRequest struct {
	Name                string              `json:"name"`
	Description         string              `json:"description"`
	TotalResourceSlots  domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts domain.VFolderHosts `json:"allowed_vfolder_hosts"`
}

// createDomain handles POST /v1/domains (superadmins).
func (a *api) createDomain(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateDomain)
	if err != nil {
		return err
	}
	var req createDomainRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.CreateDomain.Handle(c.UserContext(), metadata(c, who), commands.CreateDomain{Actor: actor(who),
		Spec: domain.DomainSpec{Name: req.Name, Description: req.Description, TotalResourceSlots: req.TotalResourceSlots,
			AllowedVFolderHosts: req.AllowedVFolderHosts}})
	if err != nil {
		return err
	}
	c.Location("/v1/domains/" + req.Name)
	return c.Status(http.StatusCreated).JSON(written{Position: res.Position})
}
