package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opMarkAgentLost = "agent.mark-lost"

// markAgentLost handles POST /v1/agents/{id}/lost (superadmins): an
// operator gives an agent up without waiting for the lost timeout (the
// node is gone for good). Its sessions go to ERROR (agent-lost), their
// allocations are released, and if it ever comes back it removes their
// kernels. Again changes nothing.
func (a *api) markAgentLost(c *fiber.Ctx) error {
	who, err := a.writing(c, opMarkAgentLost)
	if err != nil {
		return err
	}
	if !who.IsSuperadmin() {
		return domain.Errorf(opMarkAgentLost, domain.KindForbidden, "only superadmins may give an agent up")
	}
	id := c.Params("id")
	if id == "" {
		return domain.Invalid(opMarkAgentLost, "id", "required")
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.MarkAgentLost.Handle(c.UserContext(), metadata(c, who), commands.MarkAgentLost{AgentID: id})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
