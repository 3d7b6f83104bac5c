package readapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/projections/sessions"
)

const opGetSession = "session.get"

// getSession handles GET /v1/sessions/{id}: the session as the read model
// shows it, after the optional wait_for_position.
func (a *api) getSession(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := ParseSessionID(c, opGetSession)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opGetSession); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opGetSession, id)
	if err != nil {
		return err
	}
	v := viewSession(s)
	if err := a.sessionLimits(c.UserContext(), s, &v); err != nil {
		return err
	}
	return c.JSON(v)
}

// VisibleSession reads a session from the read model; one the caller may
// not see is not found.
func (a *API) VisibleSession(c *fiber.Ctx, who Caller, op string, id uuid.UUID) (sessions.Session, error) {
	s, err := a.Sessions.GetSession(c.UserContext(), id)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return sessions.Session{}, SessionNotFound(op, id)
	case err == nil && !who.sees(s):
		accesslog.Deny(c)
		return sessions.Session{}, SessionNotFound(op, id)
	}
	return s, err
}
