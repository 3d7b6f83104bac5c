package commandapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyResourceGroup = "resource-group.modify"

// modifyResourceGroupRequest is the body of PATCH
// /v1/resource-groups/{name}: the settings to change.
type modifyResourceGroupRequest struct {
	Description                  *string                `json:"description"`
	IsActive                     *bool                  `json:"is_active"`
	IsPublic                     *bool                  `json:"is_public"`
	AllowedSessionTypes          *[]domain.SessionType  `json:"allowed_session_types"`
	PendingTimeout               *int64                 `json:"pending_timeout"`
	SchedulerOrder               *domain.SchedulerOrder `json:"scheduler"`
	AgentSelector                *domain.AgentSelector  `json:"agent_selector"`
	AllowFractionalFragmentation *bool                  `json:"allow_fractional_resource_fragmentation"`
	FIFOSkipAfter                *int                   `json:"fifo_skip_after"`
}

// modifyResourceGroup handles PATCH /v1/resource-groups/{name}
// (superadmins).
func (a *api) modifyResourceGroup(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyResourceGroup)
	if err != nil {
		return err
	}
	var req modifyResourceGroupRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyResourceGroup.Handle(c.UserContext(), metadata(c, who), commands.ModifyResourceGroup{Actor: actor(who),
		Name: c.Params("id"), Changes: domain.ResourceGroupChanges{
			Description: req.Description, IsActive: req.IsActive, IsPublic: req.IsPublic, AllowedSessionTypes: req.AllowedSessionTypes,
			PendingTimeout: req.PendingTimeout, SchedulerOrder: req.SchedulerOrder, AgentSelector: req.AgentSelector,
			AllowFractionalFragmentation: req.AllowFractionalFragmentation, FIFOSkipAfter: req.FIFOSkipAfter,
		}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
