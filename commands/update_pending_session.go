package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// UpdatePendingSession records why the scheduler could not place a PENDING
// session: the reason (no-available-instances, predicate-checks-failed),
// every failed check, and the scheduler's count of tries.
type UpdatePendingSession struct {
	SessionID uuid.UUID
	Reason    string
	Details   []string
	Tries     int
}

func (UpdatePendingSession) CommandName() string { return "session.update-pending" }

type updatePendingSessionHandler struct{ deps }

// Handle records the reasons (domain.Session.UpdatePending); the same
// reasons as last time append nothing, so a scheduler may send this every
// round.
func (h updatePendingSessionHandler) Handle(ctx context.Context, md Metadata, cmd UpdatePendingSession) (Result, error) {
	at := h.now()
	_, pos, err := h.sessions.update(ctx, SessionStream(cmd.SessionID), md, func(s *domain.Session) ([]domain.Event, error) {
		return s.UpdatePending(cmd.Reason, cmd.Details, cmd.Tries, at)
	})
	return Result{Position: pos}, err
}
