package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/projections/sessions"
)

// Roles (DOMAIN.md, "Tenancy and people").
const (
	RoleSuperadmin = "superadmin"
	RoleAdmin      = "admin"
	RoleUser       = "user"
	RoleMonitor    = "monitor"
)

// defaultScope names the domain, project and resource group a request
// falls back to when neither the caller nor the body names one.
const defaultScope = "default"

// caller is the authenticated principal, with the defaults applied.
type caller struct {
	httpapi.Principal
}

// callerOf returns the request's principal. Deps.Auth has run, so a
// missing one is a wiring mistake: it is refused as unauthenticated
// rather than served anonymously.
func callerOf(c *fiber.Ctx) (caller, error) {
	p, ok := httpapi.CurrentPrincipal(c)
	if !ok {
		return caller{}, domain.Errorf("", domain.KindUnauthenticated, "no authenticated caller")
	}
	if p.UserID == "" {
		p.UserID = defaultScope
	}
	if p.AccessKey == "" {
		p.AccessKey = defaultScope
	}
	if p.Domain == "" {
		p.Domain = defaultScope
	}
	return caller{Principal: p}, nil
}

// seesAll reports whether the caller may see every session.
func (u caller) seesAll() bool {
	switch u.Role {
	case RoleSuperadmin, RoleAdmin, RoleMonitor:
		return true
	}
	return false
}

// sees reports whether the caller may see s; a session it may not see is
// answered exactly like one that does not exist.
func (u caller) sees(s sessions.Session) bool {
	return u.seesAll() || s.Owner.UserID == u.UserID
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
	}
}
