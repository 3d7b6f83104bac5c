package commandapi

import (
	"github.com/cairnhq/cairn/readapi"
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyUser = "user.modify"

// modifyUserRequest is the body of PATCH /v1/users/{id}: the fields to
// change; a new password is hashed (argon2id) before it is stored.
type modifyUserRequest struct {
	Username       *string            `json:"username"`
	FullName       *string            `json:"full_name"`
	Role           *domain.Role       `json:"role"`
	Status         *domain.UserStatus `json:"status"`
	ResourcePolicy *string            `json:"resource_policy"`
	Password       *string            `json:"password"`
}

// modifyUser handles PATCH /v1/users/{id} (superadmins, and admins of the
// user's domain on users who are not superadmins).
func (a *api) modifyUser(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyUser)
	if err != nil {
		return err
	}
	id, err := readapi.ParseUserID(c, opModifyUser, "id")
	if err != nil {
		return err
	}
	if err := a.UserScope(c, who, opModifyUser, id); err != nil {
		return err
	}
	var req modifyUserRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyUser.Handle(c.UserContext(), metadata(c, who), commands.ModifyUser{Actor: actor(who), UserID: id,
		Changes: domain.UserChanges{Username: req.Username, FullName: req.FullName, Role: req.Role, Status: req.Status,
			ResourcePolicy: req.ResourcePolicy}, Password: req.Password})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
