package domain

import "time"

// ForceTerminate ends a TERMINATING session whose teardown did not finish
// in time (the terminating timeout, then force): every kernel
// that has not ended is TERMINATED with the reason, and the session is
// TERMINATED with it (force-terminated), so that its allocations are
// released and it can never stay TERMINATING forever. Whatever still runs
// on an agent is torn down when the release reaches it.
//
// An ended session returns no events (repeating is harmless); any other
// status is KindConflict (terminate it first).
func (s *Session) ForceTerminate(reason string, at time.Time) ([]Event, error) {
	const op = "session.force-terminate"
	if err := s.checkEnd(op, reason, at); err != nil {
		return nil, err
	}
	switch {
	case s.status.IsTerminal():
		return nil, nil
	case s.status != StatusTerminating:
		return nil, Errorf(op, KindConflict, "session is %s: only a TERMINATING session can be forced", s.status)
	}
	var events []Event
	kernels := s.cloneKernels()
	for i := range kernels {
		if k := &kernels[i]; !k.status.IsTerminal() {
			events = append(events, KernelTerminated{KernelID: k.id, Reason: reason, At: at})
			k.status, k.statusReason = StatusTerminated, reason
		}
	}
	return append(events, SessionTerminated{
		Reason: reason, Result: s.resultFor(reason), ExitCode: mainExitCode(kernels), At: at,
	}), nil
}
