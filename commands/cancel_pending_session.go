package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// CancelPendingSession ends a session that was never scheduled: the user
// gave up, its pending timeout passed, or it can never be placed. Reason
// defaults to user-requested.
type CancelPendingSession struct {
	SessionID uuid.UUID
	Reason    string
}

func (CancelPendingSession) CommandName() string { return "session.cancel-pending" }

type cancelPendingSessionHandler struct {
	sessions repository[*domain.Session]
	clock
}

// newCancelPendingSessionHandler builds the handler over what it uses.
func newCancelPendingSessionHandler(sessions repository[*domain.Session], now clock) cancelPendingSessionHandler {
	return cancelPendingSessionHandler{sessions: sessions, clock: now}
}

// Handle cancels the session (domain.Session.Cancel). Cancelling a
// cancelled session succeeds without appending; a session that was
// scheduled meanwhile is KindConflict (the caller terminates it instead).
func (h cancelPendingSessionHandler) Handle(ctx context.Context, md Metadata, cmd CancelPendingSession) (Result, error) {
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonUserRequested
	}
	at := h.now()
	_, pos, err := h.sessions.update(ctx, domain.SessionStream(cmd.SessionID), md, func(s *domain.Session) ([]domain.Event, error) {
		return s.Cancel(reason, at)
	})
	return Result{Position: pos}, err
}
