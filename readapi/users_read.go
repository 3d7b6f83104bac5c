package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/tenancy"
)

const (
	opListUsers = "user.list"
	opGetUser   = "user.get"
)

// listUsers handles GET /v1/users?domain=&role=&status=: superadmins list
// any domain's users (every user without ?domain=), admins and monitors
// their domain's, users themselves. Password hashes are never shown.
func (a *api) listUsers(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListUsers)
	if err != nil {
		return err
	}
	f := tenancy.UserFilter{Domain: c.Query("domain"), Role: domain.Role(c.Query("role")), Status: domain.UserStatus(c.Query("status"))}
	if !who.IsSuperadmin() {
		if f.Domain == "" {
			f.Domain = who.Domain
		}
		if err := InDomain(c, who, opListUsers, "domain", f.Domain); err != nil {
			return err
		}
	}
	list, err := a.Tenancy.ListUsers(c.UserContext(), f)
	if err != nil {
		return err
	}
	if !who.ReadsDomain(who.Domain) {
		self := list[:0]
		for _, u := range list {
			if u.ID == who.ID {
				self = append(self, u)
			}
		}
		list = self
	}
	return c.JSON(items[tenancy.User]{Items: list})
}

// getUser handles GET /v1/users/{id}: oneself, or a user of a domain the
// caller reads.
func (a *api) getUser(c *fiber.Ctx) error {
	who, err := a.Reading(c, opGetUser)
	if err != nil {
		return err
	}
	id, err := ParseUserID(c, opGetUser, "id")
	if err != nil {
		return err
	}
	u, err := a.Tenancy.GetUser(c.UserContext(), id)
	if err != nil {
		return err
	}
	if u.ID != who.ID && !who.ReadsDomain(u.Domain) {
		return Hidden(c, opGetUser, "user")
	}
	return c.JSON(u)
}
