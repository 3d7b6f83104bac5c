package commands

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/eventstore"

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
	// KnownRevision, when set, is the session stream's revision as the
	// scheduler folded it (PENDING, with other reasons): the reasons are
	// appended expecting it, without reading the stream; when the session
	// moved meanwhile they are decided again on the stream.
	KnownRevision *int64
}

func (UpdatePendingSession) CommandName() string { return "session.update-pending" }

type updatePendingSessionHandler struct {
	sessions repository[*domain.Session]
	clock
}

// newUpdatePendingSessionHandler builds the handler over what it uses.
func newUpdatePendingSessionHandler(sessions repository[*domain.Session], now clock) updatePendingSessionHandler {
	return updatePendingSessionHandler{sessions: sessions, clock: now}
}

// Handle records the reasons (domain.Session.UpdatePending); the same
// reasons as last time append nothing, so a scheduler may send this every
// round.
func (h updatePendingSessionHandler) Handle(ctx context.Context, md Metadata, cmd UpdatePendingSession) (Result, error) {
	at := h.now()
	stream := domain.SessionStream(cmd.SessionID)
	if cmd.KnownRevision != nil && cmd.Reason != "" && cmd.Tries >= 0 {
		ev := domain.SessionPendingUpdated{Reason: cmd.Reason, Details: append([]string(nil), cmd.Details...), Tries: cmd.Tries, At: at}
		pos, err := h.sessions.appendExpecting(ctx, stream, *cmd.KnownRevision, md, []domain.Event{ev})
		if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			return Result{Position: pos}, err
		}
	}
	_, pos, err := h.sessions.update(ctx, stream, md, func(s *domain.Session) ([]domain.Event, error) {
		return s.UpdatePending(cmd.Reason, cmd.Details, cmd.Tries, at)
	})
	return Result{Position: pos}, err
}
