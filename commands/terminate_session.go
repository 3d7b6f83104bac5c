package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// TerminateSession ends a session (DELETE /sessions/{id}, or an idle or
// lifetime limit). Reason defaults to user-requested.
type TerminateSession struct {
	SessionID uuid.UUID
	Reason    string
}

func (TerminateSession) CommandName() string { return "session.terminate" }

type terminateSessionHandler struct {
	sessions repository[*domain.Session]
	releaser
	clock
}

// newTerminateSessionHandler builds the handler over what it uses.
func newTerminateSessionHandler(sessions repository[*domain.Session], releaser releaser, now clock) terminateSessionHandler {
	return terminateSessionHandler{sessions: sessions, releaser: releaser, clock: now}
}

// Handle records the request (domain.Session.Terminate): a PENDING session
// is cancelled, a scheduled or running one goes TERMINATING (its agents
// tear the kernels down and report them removed, which ends it). It is
// idempotent: terminating a session that is terminating or has ended
// appends nothing and succeeds. It also releases any allocation an ended
// session still holds, so repeating it heals a crash after the session's
// append.
func (h terminateSessionHandler) Handle(ctx context.Context, md Metadata, cmd TerminateSession) (Result, error) {
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonUserRequested
	}
	at := h.now()
	s, pos, err := h.sessions.update(ctx, domain.SessionStream(cmd.SessionID), md, func(s *domain.Session) ([]domain.Event, error) {
		return s.Terminate(reason, at)
	})
	if err != nil {
		return Result{}, err
	}
	relPos, err := h.releaseEnded(ctx, md, s, at)
	return Result{Position: max(pos, relPos)}, err
}
