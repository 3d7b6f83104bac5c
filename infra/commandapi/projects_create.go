package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateProject = "project.create"

// createProjectRequest is the body of POST /v1/projects; the domain
// defaults to the caller's.
type createProjectRequest struct {
	Domain              string              `json:"domain"`
	Name                string              `json:"name"`
	Description         string              `json:"description"`
	TotalResourceSlots  domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts domain.VFolderHosts `json:"allowed_vfolder_hosts"`
	ResourcePolicy      string              `json:"resource_policy"`
}

// createProject handles POST /v1/projects (superadmins, and admins of the
// domain).
func (a *api) createProject(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateProject)
	if err != nil {
		return err
	}
	var req createProjectRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.Domain == "" {
		req.Domain = who.Domain
	}
	if err := readapi.InDomain(c, who, opCreateProject, "domain", req.Domain); err != nil {
		return err
	}
	res, err := a.Commands.CreateProject.Handle(c.UserContext(), metadata(c, who), commands.CreateProject{Actor: actor(who),
		Spec: domain.ProjectSpec{Domain: req.Domain, Name: req.Name, Description: req.Description, TotalResourceSlots: req.TotalResourceSlots,
			AllowedVFolderHosts: req.AllowedVFolderHosts, ResourcePolicy: req.ResourcePolicy}})
	if err != nil {
		return err
	}
	c.Location("/v1/projects/" + req.Name + "?domain=" + req.Domain)
	return c.Status(http.StatusCreated).JSON(written{Position: res.Position})
}
