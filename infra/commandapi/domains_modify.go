package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
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
	if !who.IsSuperadmin() && name != who.Domain {
		return readapi.Hidden(c, opModifyDomain, "domain")
	}
	var req modifyDomainRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyDomain.Handle(c.UserContext(), metadata(c, who), commands.ModifyDomain{Actor: actor(who), Name: name,
		Changes: domain.DomainChanges{Description: req.Description, TotalResourceSlots: req.TotalResourceSlots,
			AllowedVFolderHosts: req.AllowedVFolderHosts, IsActive: req.IsActive}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
