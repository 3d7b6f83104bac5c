package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// ForceTerminateSession ends a session stuck in TERMINATING (its agents
// never reported the kernels gone): the scheduler sends it when the
// terminating deadline passes. Reason defaults to force-terminated.
type ForceTerminateSession struct {
	SessionID uuid.UUID
	Reason    string
}

func (ForceTerminateSession) CommandName() string { return "session.force-terminate" }

type forceTerminateSessionHandler struct {
	sessions repository[*domain.Session]
	releaser
	clock
}

// newForceTerminateSessionHandler builds the handler over what it uses.
func newForceTerminateSessionHandler(sessions repository[*domain.Session], releaser releaser, now clock) forceTerminateSessionHandler {
	return forceTerminateSessionHandler{sessions: sessions, releaser: releaser, clock: now}
}

// Handle ends the session and its remaining kernels
// (domain.Session.ForceTerminate), then releases every allocation the
// session holds; the releases reach the agents as kernel.destroy, so a
// container that outlived the deadline is still torn down. Forcing an
// ended session appends nothing and repeats the (idempotent) release,
// which heals a crash between the two steps.
func (h forceTerminateSessionHandler) Handle(ctx context.Context, md Metadata, cmd ForceTerminateSession) (Result, error) {
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonForceTerminated
	}
	at := h.now()
	s, pos, err := h.sessions.update(ctx, domain.SessionStream(cmd.SessionID), md, func(s *domain.Session) ([]domain.Event, error) {
		return s.ForceTerminate(reason, at)
	})
	if err != nil {
		return Result{}, err
	}
	relPos, err := h.releaseEnded(ctx, md, s, at)
	return Result{Position: max(pos, relPos)}, err
}
