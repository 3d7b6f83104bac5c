package domain

// progressRank orders the phases a kernel passes before it ends; 0 for
// PENDING and for the ends.
func progressRank(s SessionStatus) int {
	switch s {
	case StatusScheduled:
		return 1
	case StatusPreparing:
		return 2
	case StatusPulling:
		return 3
	case StatusPrepared:
		return 4
	case StatusCreating:
		return 5
	case StatusRunning:
		return 6
	}
	return 0
}

// progressReason is the status reason of a session reaching a phase.
func progressReason(s SessionStatus) string {
	switch s {
	case StatusPreparing:
		return ReasonKernelPreparing
	case StatusPulling:
		return ReasonKernelPulling
	case StatusPrepared:
		return ReasonKernelPrepared
	case StatusCreating:
		return ReasonKernelCreating
	case StatusRunning:
		return ReasonKernelStarted
	}
	return ReasonScheduled
}

// deriveSessionStatus is the session status its kernels imply, given the
// session's current status:
//   - any kernel in ERROR: ERROR;
//   - every kernel ended: TERMINATED (CANCELLED kernels count as ended;
//     CANCELLED if every kernel was cancelled);
//   - some kernels ended and others not, or the session is being torn
//     down: TERMINATING. A session one of whose kernels has ended is no
//     longer whole, so it is torn down rather than left half-running (the
//     field failure where one CANCELLED kernel kept a session in CREATING
//     forever);
//   - otherwise the least advanced kernel's phase: RUNNING only when every
//     kernel runs.
func deriveSessionStatus(current SessionStatus, kernels []Kernel) SessionStatus {
	anyEnded, allEnded, allCancelled := false, true, true
	least := StatusRunning
	for _, k := range kernels {
		switch {
		case k.status == StatusError:
			return StatusError
		case k.status.IsTerminal():
			anyEnded = true
			allCancelled = allCancelled && k.status == StatusCancelled
		default:
			allEnded, allCancelled = false, false
			if progressRank(k.status) < progressRank(least) {
				least = k.status
			}
		}
	}
	switch {
	case allEnded && allCancelled:
		return StatusCancelled
	case allEnded:
		return StatusTerminated
	case anyEnded, current == StatusTerminating:
		return StatusTerminating
	}
	return least
}
