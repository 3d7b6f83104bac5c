package domain

import "time"

// Terminate ends the session on a user's (or a limit's) request, whatever
// its status (a user may terminate a session in any non-terminal
// status):
//   - PENDING: nothing runs, so the session is CANCELLED with the reason;
//   - SCHEDULED .. RUNNING: TERMINATING with the reason; the agents tear the
//     kernels down and report them gone, which ends the session;
//   - TERMINATING or ended: no events and no error. Terminate is
//     idempotent, so a repeated DELETE is harmless and the first reason
//     stays.
func (s *Session) Terminate(reason string, at time.Time) ([]Event, error) {
	const op = "session.terminate"
	if err := s.checkEnd(op, reason, at); err != nil {
		return nil, err
	}
	switch {
	case s.status.IsTerminal(), s.status == StatusTerminating:
		return nil, nil
	case s.status == StatusPending:
		return []Event{SessionCancelled{Reason: reason, At: at}}, nil
	}
	return []Event{SessionTerminating{Reason: reason, At: at}}, nil
}

// Cancel ends a PENDING session (user-requested, pending-timeout, an
// impossible request). Cancelling a CANCELLED session returns no events;
// any other status is KindConflict (terminate it instead), so a pending
// timeout that races with the scheduler loses cleanly.
func (s *Session) Cancel(reason string, at time.Time) ([]Event, error) {
	const op = "session.cancel"
	if err := s.checkEnd(op, reason, at); err != nil {
		return nil, err
	}
	switch s.status {
	case StatusCancelled:
		return nil, nil
	case StatusPending:
		return []Event{SessionCancelled{Reason: reason, At: at}}, nil
	}
	return nil, Errorf(op, KindConflict, "session is %s: only a PENDING session can be cancelled", s.status)
}

// Fail puts the session in ERROR (e.g. agent-lost): every kernel that has
// not ended goes to ERROR with it, and its allocations must be released.
// An ended session returns no events, so repeating it is harmless.
func (s *Session) Fail(reason, message string, at time.Time) ([]Event, error) {
	const op = "session.fail"
	if err := s.checkEnd(op, reason, at); err != nil {
		return nil, err
	}
	if s.status.IsTerminal() {
		return nil, nil
	}
	return []Event{SessionErrored{Reason: reason, Message: message, At: at}}, nil
}

func (s *Session) checkEnd(op, reason string, at time.Time) error {
	switch {
	case !s.exists:
		return s.notFound(op)
	case reason == "":
		return Invalid(op, "reason", "required")
	case at.IsZero():
		return Invalid(op, "at", "must be set")
	}
	return nil
}
