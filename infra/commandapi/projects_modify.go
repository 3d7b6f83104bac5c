package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyProject = "project.modify"

// modifyProjectRequest is the body of PATCH /v1/projects/{name}: the
// fields to change.
type modifyProjectRequest struct {
	Description         *string              `json:"description"`
	TotalResourceSlots  *domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts *domain.VFolderHosts `json:"allowed_vfolder_hosts"`
	ResourcePolicy      *string              `json:"resource_policy"`
	IsActive            *bool                `json:"is_active"`
}

// modifyProject handles PATCH /v1/projects/{name}?domain=.
func (a *api) modifyProject(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyProject)
	if err != nil {
		return err
	}
	d := readapi.DomainParam(c, who)
	if err := readapi.InDomain(c, who, opModifyProject, "project", d); err != nil {
		return err
	}
	var req modifyProjectRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyProject.Handle(c.UserContext(), metadata(c, who), commands.ModifyProject{Actor: actor(who),
		Domain: d, Name: c.Params("id"), Changes: domain.ProjectChanges{Description: req.Description, TotalResourceSlots: req.TotalResourceSlots,
			AllowedVFolderHosts: req.AllowedVFolderHosts, ResourcePolicy: req.ResourcePolicy, IsActive: req.IsActive}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
