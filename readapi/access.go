package readapi

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
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

// defaultScope names the project a session request falls back to when
// its body names none.
const defaultScope = "default"

// caller is the authenticated principal and its user id.
type caller struct {
	httpapi.Principal
	id uuid.UUID
}

// callerOf returns the request's principal. Deps.Auth has run, so a
// missing or incomplete one is a wiring mistake: it is refused as
// unauthenticated rather than served anonymously.
func callerOf(c *fiber.Ctx) (caller, error) {
	p, ok := httpapi.CurrentPrincipal(c)
	if !ok {
		return caller{}, domain.Errorf("", domain.KindUnauthenticated, "no authenticated caller")
	}
	id, err := uuid.Parse(p.UserID)
	if err != nil || p.Domain == "" || !domain.Role(p.Role).Valid() {
		return caller{}, domain.Errorf("", domain.KindUnauthenticated, "the caller's identity is incomplete")
	}
	return caller{Principal: p, id: id}, nil
}

// actor is the caller as the commands authorize it.
func (u caller) actor() commands.Principal {
	return commands.Principal{UserID: u.id, Role: domain.Role(u.Role), Domain: u.Domain}
}

func (u caller) isSuperadmin() bool { return u.Role == RoleSuperadmin }

// readsDomain reports whether the caller may read everything of domain
// d: superadmins everywhere, admins and monitors in their own domain.
func (u caller) readsDomain(d string) bool {
	return u.isSuperadmin() || ((u.Role == RoleAdmin || u.Role == RoleMonitor) && u.Domain == d)
}

// memberOf reports whether the caller belongs to a project of its domain.
func (u caller) memberOf(project string) bool { return slices.Contains(u.Projects, project) }

// sees reports whether the caller may see s: superadmins every session,
// admins and monitors their domain's, users their own. A session it may
// not see is answered exactly like one that does not exist.
func (u caller) sees(s sessions.Session) bool {
	return u.readsDomain(s.Domain) || s.Owner.UserID == u.UserID
}

// mayWrite refuses read-only callers (monitors).
func (u caller) mayWrite(op string) error {
	if u.Role == RoleMonitor {
		return domain.Errorf(op, domain.KindForbidden, "the monitor role is read-only")
	}
	return nil
}

// metadata is what the events of a command record about the request.
func (u caller) metadata(c *fiber.Ctx) commands.Metadata {
	// fiber's strings may point into the request buffer: the metadata
	// outlives nothing here, but copying keeps it safe if it ever does.
	return commands.Metadata{
		Actor:     strings.Clone(u.UserID),
		AccessKey: strings.Clone(u.AccessKey),
		RequestID: strings.Clone(httpapi.RequestID(c)),
		ClientIP:  c.IP(),
		Access:    accesslog.Access(c),
	}
}

// hidden is the answer for an object the caller may not see: exactly the
// not-found of a missing object, recorded as denied in the audit trail.
func hidden(c *fiber.Ctx, op, what string) error {
	accesslog.Deny(c)
	return domain.NotFound(op, what)
}
