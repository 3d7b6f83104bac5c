package domain

// SessionStatus is where a session is in its lifecycle.
type SessionStatus string

// The lifecycle: PENDING → SCHEDULED → PREPARING (→ PULLING) → PREPARED →
// CREATING → RUNNING → TERMINATING → TERMINATED; or CANCELLED (never ran)
// or ERROR. TERMINATED, CANCELLED and ERROR are terminal. A placed session
// (SCHEDULED to RUNNING) whose agent stopped answering is DISCONNECTED
// until the agent is heard from again, when it returns to the phase its
// kernels are in.
const (
	StatusPending   SessionStatus = "PENDING"
	StatusScheduled SessionStatus = "SCHEDULED"
	StatusPreparing SessionStatus = "PREPARING"
	StatusPulling   SessionStatus = "PULLING"
	StatusPrepared  SessionStatus = "PREPARED"
	StatusCreating  SessionStatus = "CREATING"
	StatusRunning   SessionStatus = "RUNNING"
	// StatusDisconnected: an agent running one of the session's kernels
	// is silent past the heartbeat timeout. The session keeps its
	// allocations; it returns to its phase when the agent reports the
	// kernel again, and goes to ERROR (agent-lost) if the agent is given
	// up on.
	StatusDisconnected SessionStatus = "DISCONNECTED"
	StatusTerminating  SessionStatus = "TERMINATING"
	StatusTerminated   SessionStatus = "TERMINATED"
	StatusCancelled    SessionStatus = "CANCELLED"
	StatusError        SessionStatus = "ERROR"
)

// IsTerminal reports whether no further status change can happen.
func (s SessionStatus) IsTerminal() bool {
	return s == StatusTerminated || s == StatusCancelled || s == StatusError
}

// IsStarting reports whether a session in this status is placed and has
// not run yet: SCHEDULED to CREATING, the phases a start timeout covers.
func (s SessionStatus) IsStarting() bool {
	switch s {
	case StatusScheduled, StatusPreparing, StatusPulling, StatusPrepared, StatusCreating:
		return true
	}
	return false
}

// HoldsResources reports whether a session in this status holds its
// allocation: from SCHEDULED until its containers are gone.
func (s SessionStatus) HoldsResources() bool {
	switch s {
	case StatusPending, StatusTerminated, StatusCancelled, StatusError:
		return false
	}
	return true
}

// transitions lists, for each status, the statuses it may move to.
// Terminating and error are reachable from every non-terminal status and
// are checked separately.
var transitions = map[SessionStatus][]SessionStatus{
	// A kernel may end (exit, or its container vanish) before its agent
	// reported every phase, so TERMINATED is reachable by skipping forward
	// from every phase after SCHEDULED.
	StatusPending:   {StatusScheduled, StatusCancelled},
	StatusScheduled: {StatusPreparing, StatusPulling, StatusPrepared, StatusCreating, StatusRunning, StatusTerminated, StatusDisconnected},
	StatusPreparing: {StatusPulling, StatusPrepared, StatusCreating, StatusRunning, StatusTerminated, StatusDisconnected},
	StatusPulling:   {StatusPrepared, StatusCreating, StatusRunning, StatusTerminated, StatusDisconnected},
	StatusPrepared:  {StatusCreating, StatusRunning, StatusTerminated, StatusDisconnected},
	StatusCreating:  {StatusRunning, StatusTerminated, StatusDisconnected},
	StatusRunning:   {StatusTerminated, StatusDisconnected},
	// DISCONNECTED goes back to the phase its kernels are in when the
	// agent returns (which may be behind the phase it left, say RUNNING
	// when it left CREATING: the return is no progress of its own).
	StatusDisconnected: {StatusScheduled, StatusPreparing, StatusPulling, StatusPrepared, StatusCreating, StatusRunning, StatusTerminated},
	// TERMINATING ends in TERMINATED (containers gone), or ERROR.
	StatusTerminating: {StatusTerminated},
}

// CanTransition reports whether a session may move from s to next.
// Skipping forward over intermediate phases is allowed (an agent may report
// RUNNING without having reported PREPARED); going back is not.
func (s SessionStatus) CanTransition(next SessionStatus) bool {
	if s.IsTerminal() {
		return false
	}
	switch next {
	case StatusError:
		return true
	case StatusTerminating:
		return s != StatusPending && s != StatusTerminating
	case StatusCancelled:
		return s == StatusPending
	}
	for _, allowed := range transitions[s] {
		if allowed == next {
			return true
		}
	}
	return false
}

// Status reasons (status_info) recorded with each change.
const (
	ReasonUserRequested   = "user-requested"
	ReasonIdleTimeout     = "idle-timeout"
	ReasonSessionLifetime = "session-lifetime"
	ReasonTaskFinished    = "task-finished"
	ReasonTaskFailed      = "task-failed"
	ReasonTaskTimeout     = "task-timeout"
	ReasonPendingTimeout  = "pending-timeout"
	ReasonFailedToStart   = "failed-to-start"
	ReasonAgentLost       = "agent-lost"
	// ReasonAgentDisconnected: the session's agent is silent past the
	// heartbeat timeout (DISCONNECTED).
	ReasonAgentDisconnected = "agent-disconnected"
	// ReasonAgentReconnected: the agent was heard from again and reported
	// the session's kernel; the session is back in its phase.
	ReasonAgentReconnected = "agent-reconnected"
	// ReasonKernelLost: the agent of a DISCONNECTED session came back but
	// never reported the session's kernel (it no longer has it).
	ReasonKernelLost           = "kernel-lost"
	ReasonForceTerminated      = "force-terminated"
	ReasonNoAvailableInstances = "no-available-instances"
	ReasonPredicateChecks      = "predicate-checks-failed"
	ReasonScheduled            = "scheduled"
	ReasonKernelStarted        = "kernel-started"
	// Progress of a session's kernels before they run.
	ReasonKernelPreparing = "kernel-preparing"
	ReasonKernelPulling   = "kernel-pulling"
	ReasonKernelPrepared  = "kernel-prepared"
	ReasonKernelCreating  = "kernel-creating"
	// ReasonScheduleAborted: an allocation released because the session it
	// was made for could not be marked scheduled.
	ReasonScheduleAborted = "schedule-aborted"
)
