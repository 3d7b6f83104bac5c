package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyDomain = "domain.modify"

// modifyDomainRequest is the body of PATCH /v1/domains/{name}: the fields
// to change; absent ones are left as they are.
type modifyDomainRequest struct {
	Description         *string              `json:"description"`
	TotalResourceSlots  *domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts *domain.VFolderHosts `json:"allowed_vfolder_hosts"`
	IsActive            *bool                `json:"is_active"`
}

// modifyDomain handles PATCH /v1/domains/{name} (superadmins; another
// domain is not found for anyone else).
func (a *api) modifyDomain(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyDomain)
	if err != nil {
		return err
	}
	name := c.Params("id")
	if !who.isSuperadmin() && name != who.Domain {
		return hidden(c, opModifyDomain, "domain")
	}
	var req modifyDomainRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyDomain.Handle(c.UserContext(), who.metadata(c), commands.ModifyDomain{Actor: who.actor(), Name: name,
		Changes: domain.DomainChanges{Description: req.Description, TotalResourceSlots: req.TotalResourceSlots,
			AllowedVFolderHosts: req.AllowedVFolderHosts, IsActive: req.IsActive}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
