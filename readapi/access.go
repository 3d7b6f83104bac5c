package readapi

import (
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/projections/sessions"
)

// Roles, from the most to the least powerful.
const (
	RoleSuperadmin = string(domain.RoleSuperadmin)
	RoleAdmin      = string(domain.RoleAdmin)
	RoleUser       = string(domain.RoleUser)
	RoleMonitor    = string(domain.RoleMonitor)
)

// Caller is the authenticated principal and its user id. The command
// endpoints (infra/commandapi) authorize with it too.
type Caller struct {
	httpapi.Principal
	ID uuid.UUID
}

// caller is the short name the handlers use.
type caller = Caller

// CallerOf returns the request's principal. The authentication middleware
// has run, so a missing or incomplete one is a wiring mistake: it is
// refused as unauthenticated rather than served anonymously.
func CallerOf(c *fiber.Ctx) (Caller, error) {
	p, ok := httpapi.CurrentPrincipal(c)
	if !ok {
		return Caller{}, domain.Errorf("", domain.KindUnauthenticated, "no authenticated caller")
	}
	id, err := uuid.Parse(p.UserID)
	if err != nil || p.Domain == "" || !domain.Role(p.Role).Valid() {
		return Caller{}, domain.Errorf("", domain.KindUnauthenticated, "the caller's identity is incomplete")
	}
	return Caller{Principal: p, ID: id}, nil
}

// IsSuperadmin reports whether the caller is a superadmin.
func (u Caller) IsSuperadmin() bool { return u.Role == RoleSuperadmin }

// ReadsDomain reports whether the caller may read everything of domain
// d: superadmins everywhere, admins and monitors in their own domain.
func (u Caller) ReadsDomain(d string) bool {
	return u.IsSuperadmin() || ((u.Role == RoleAdmin || u.Role == RoleMonitor) && u.Domain == d)
}

// MemberOf reports whether the caller belongs to a project of its domain.
func (u Caller) MemberOf(project string) bool { return slices.Contains(u.Projects, project) }

// sees reports whether the caller may see s: superadmins every session,
// admins and monitors their domain's, users their own. A session it may
// not see is answered exactly like one that does not exist.
func (u Caller) sees(s sessions.Session) bool {
	return u.ReadsDomain(s.Domain) || s.Owner.UserID == u.UserID
}

// Hidden is the answer for an object the caller may not see: exactly the
// not-found of a missing object, recorded as denied in the audit trail.
func Hidden(c *fiber.Ctx, op, what string) error {
	accesslog.Deny(c)
	return domain.NotFound(op, what)
}
