package commandapi

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opRevokeResourceGroup = "resource-group.revoke"

// revokeResourceGroupAccess handles DELETE
// /v1/resource-groups/{name}/access?kind=&name= (superadmins): the grantee
// may no longer use the group; revoking what was not granted changes
// nothing. The grantee is in the query because a project's name has a '/'.
func (a *api) revokeResourceGroupAccess(c *fiber.Ctx) error {
	who, err := a.writing(c, opRevokeResourceGroup)
	if err != nil {
		return err
	}
	g := domain.Grantee{Kind: domain.GranteeKind(strings.Clone(c.Query("kind"))), Name: strings.Clone(c.Query("name"))}
	if err := g.Check(opRevokeResourceGroup); err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.RevokeResourceGroupAccess.Handle(c.UserContext(), metadata(c, who), commands.RevokeResourceGroupAccess{Actor: actor(who),
		ResourceGroup: c.Params("id"), Grantee: g})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
