package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opIssueKeypair = "keypair.issue"

// issueKeypairRequest is the body of POST /v1/keypairs.
type issueKeypairRequest struct {
	UserID         uuid.UUID `json:"user_id"`
	ResourcePolicy string    `json:"resource_policy"`
	RateLimit      int       `json:"rate_limit"`
	Main           bool      `json:"main"`
}

// issueKeypairResponse carries the new keys: the secret key is shown here
// and never again.
type issueKeypairResponse struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Main      bool   `json:"main"`
	Position  uint64 `json:"position"`
}

// issueKeypair handles POST /v1/keypairs (superadmins, and admins of the
// user's domain).
func (a *api) issueKeypair(c *fiber.Ctx) error {
	who, err := a.writing(c, opIssueKeypair)
	if err != nil {
		return err
	}
	var req issueKeypairRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.UserID == uuid.Nil {
		return domain.Invalid(opIssueKeypair, "user_id", "required")
	}
	if err := a.UserScope(c, who, opIssueKeypair, req.UserID); err != nil {
		return err
	}
	res, err := a.Commands.IssueKeypair.Handle(c.UserContext(), metadata(c, who), commands.IssueKeypair{Actor: actor(who),
		UserID: req.UserID, ResourcePolicy: req.ResourcePolicy, RateLimit: req.RateLimit, Main: req.Main})
	if err != nil {
		return err
	}
	c.Location("/v1/keypairs/" + res.AccessKey)
	return c.Status(http.StatusCreated).JSON(issueKeypairResponse{AccessKey: res.AccessKey, SecretKey: res.SecretKey, Main: res.Main, Position: res.Position})
}
