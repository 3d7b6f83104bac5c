package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateUser = "user.create"

// createUserRequest is the body of POST /v1/users; the domain defaults to
// the caller's, the role to user, the status to active.
type createUserRequest struct {
	Email          string            `json:"email"`
	Password       string            `json:"password"`
	Username       string            `json:"username"`
	FullName       string            `json:"full_name"`
	Domain         string            `json:"domain"`
	Role           domain.Role       `json:"role"`
	Status         domain.UserStatus `json:"status"`
	ResourcePolicy string            `json:"resource_policy"`
}

// createUserResponse names the new user.
type createUserResponse struct {
	ID       uuid.UUID `json:"id"`
	Position uint64    `json:"position"`
}

// createUser handles POST /v1/users (superadmins, and admins of the
// domain for roles other than superadmin). A retried request with the same
// X-Request-ID gets the same user.
func (a *api) createUser(c *fiber.Ctx) error {
	who, err := a.writing(c, opCreateUser)
	if err != nil {
		return err
	}
	var req createUserRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.Domain == "" {
		req.Domain = who.Domain
	}
	if err := readapi.InDomain(c, who, opCreateUser, "domain", req.Domain); err != nil {
		return err
	}
	res, err := a.Commands.CreateUser.Handle(c.UserContext(), metadata(c, who), commands.CreateUser{Actor: actor(who),
		Spec: domain.UserSpec{Email: req.Email, Username: req.Username, FullName: req.FullName, Domain: req.Domain, Role: req.Role,
			Status: req.Status, ResourcePolicy: req.ResourcePolicy}, Password: req.Password})
	if err != nil {
		return err
	}
	c.Location("/v1/users/" + res.UserID.String())
	return c.Status(http.StatusCreated).JSON(createUserResponse{ID: res.UserID, Position: res.Position})
}
