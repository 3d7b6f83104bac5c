package readapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Before a command runs on an object of a domain, the handlers look the
// object's domain up in the read model: one of another domain is hidden
// (404, recorded as denied) from everyone but superadmins, exactly as a
// missing one is. Inside the caller's own domain the command decides
// (403 for a role that may not act). An object the read model does not
// show (yet) is left to the command, whose answer is the same 404.

// DomainParam is the domain a project route is about: ?domain=, by
// default the caller's.
func DomainParam(c *fiber.Ctx, who Caller) string {
	if d := c.Query("domain"); d != "" {
		return d
	}
	return who.Domain
}

// InDomain hides another domain's objects from all but superadmins.
func InDomain(c *fiber.Ctx, who Caller, op, what, d string) error {
	if !who.IsSuperadmin() && d != who.Domain {
		return Hidden(c, op, what)
	}
	return nil
}

// ParseUserID parses the user id of a route parameter; a malformed one is not
// found.
func ParseUserID(c *fiber.Ctx, op, param string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params(param))
	if err != nil {
		return uuid.Nil, domain.NotFound(op, "user")
	}
	return id, nil
}

// UserScope hides a user of another domain from all but superadmins.
func (a *API) UserScope(c *fiber.Ctx, who Caller, op string, id uuid.UUID) error {
	if who.IsSuperadmin() || id == who.ID {
		return nil
	}
	u, err := a.Tenancy.GetUser(c.UserContext(), id)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return InDomain(c, who, op, "user", u.Domain)
}

// KeypairScope hides a keypair of another domain from all but
// superadmins and its owner.
func (a *API) KeypairScope(c *fiber.Ctx, who Caller, op, accessKey string) error {
	if who.IsSuperadmin() {
		return nil
	}
	k, err := a.Tenancy.GetKeypair(c.UserContext(), accessKey)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return err
	case k.UserID == who.ID:
		return nil
	}
	return InDomain(c, who, op, "keypair", k.Domain)
}
