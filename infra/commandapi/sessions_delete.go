package commandapi

import (
	"errors"
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opDeleteSession = "session.terminate"

// terminateAccepted is the answer of DELETE /v1/sessions/{id} when the
// TerminateSession command ran (202).
type terminateAccepted struct {
	ID       uuid.UUID `json:"id"`
	Position uint64    `json:"position"`
}

// terminateNoop is the answer of DELETE /v1/sessions/{id} for a session
// that is already terminating or has ended (200): nothing was appended;
// Position is that of the session's last event.
type terminateNoop struct {
	ID              uuid.UUID            `json:"id"`
	Status          domain.SessionStatus `json:"status"`
	AlreadyFinished bool                 `json:"already_finished"`
	Position        uint64               `json:"position"`
}

// deleteSession handles DELETE /v1/sessions/{id} (see the package
// documentation, "Terminating").
func (a *api) deleteSession(c *fiber.Ctx) error {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.ParseSessionID(c, opDeleteSession)
	if err != nil {
		return err
	}
	if err := mayWrite(who, opDeleteSession); err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opDeleteSession); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opDeleteSession, id)
	switch {
	case err == nil:
		// Terminating and ended sessions never change back, so a stale
		// read model cannot make this answer wrong.
		if s.Status == domain.StatusTerminating || s.Status.IsTerminal() {
			return c.Status(http.StatusOK).JSON(terminateNoop{
				ID: s.ID, Status: s.Status, AlreadyFinished: s.Status.IsTerminal(), Position: s.Position,
			})
		}
	case errors.Is(err, domain.ErrNotFound) && who.IsSuperadmin():
		// Maybe requested but not projected yet: the command reads the
		// session's stream, the authority on whether it exists.
	default:
		return err
	}
	res, err := a.Commands.TerminateSession.Handle(c.UserContext(), metadata(c, who),
		commands.TerminateSession{SessionID: id, Reason: domain.ReasonUserRequested})
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return readapi.SessionNotFound(opDeleteSession, id)
		}
		return err
	}
	return c.Status(http.StatusAccepted).JSON(terminateAccepted{ID: id, Position: res.Position})
}
