package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
)

const opGrantResourceGroup = "resource-group.grant"

// grantRequest is the body of POST /v1/resource-groups/{name}/access: a
// domain (by name), a project ("<domain>/<name>") or a keypair (by access
// key).
type grantRequest struct {
	Kind domain.GranteeKind `json:"kind"`
	Name string             `json:"name"`
}

// grantResourceGroupAccess handles POST /v1/resource-groups/{name}/access
// (superadmins): the grantee may use the group; granting again changes
// nothing.
func (a *api) grantResourceGroupAccess(c *fiber.Ctx) error {
	who, err := a.writing(c, opGrantResourceGroup)
	if err != nil {
		return err
	}
	var req grantRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusOK)
	res, err := a.Commands.GrantResourceGroupAccess.Handle(c.UserContext(), metadata(c, who), commands.GrantResourceGroupAccess{Actor: actor(who),
		ResourceGroup: c.Params("id"), Grantee: domain.Grantee{Kind: req.Kind, Name: req.Name}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
