package domain

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// DisconnectedFrom returns the silent agents that keep the session
// DISCONNECTED, sorted (none unless it is).
func (s *Session) DisconnectedFrom() []string { return slices.Clone(s.disconnectedFrom) }

// Disconnect records that agent, which runs some of the session's kernels,
// is silent past the heartbeat timeout: the session goes DISCONNECTED
// (reason agent-disconnected) and keeps its allocations; nothing is torn
// down. It returns no events for a session that has nothing running there
// (PENDING, ended, no kernel of it on the agent that has not ended), one
// being torn down (TERMINATING: its teardown has its own timeout), or one
// already disconnected from that agent.
func (s *Session) Disconnect(agentID, reason string, at time.Time) ([]Event, error) {
	const op = "session.disconnect"
	if err := s.checkAgentChange(op, agentID, at); err != nil {
		return nil, err
	}
	if reason == "" {
		return nil, Invalid(op, "reason", "required")
	}
	switch {
	case s.status.IsTerminal(), s.status == StatusPending, s.status == StatusTerminating,
		slices.Contains(s.disconnectedFrom, agentID), !s.hasLiveKernelOn(agentID, nil):
		return nil, nil
	}
	return []Event{SessionDisconnected{AgentID: agentID, Reason: reason, At: at}}, nil
}

// Reconnect records that agent, which the session is disconnected from,
// reports one of the session's kernels running (running lists the kernels
// whose containers run, as an agent's heartbeat does). The session leaves
// DISCONNECTED for the phase its kernels are in (RUNNING for a session
// that was running), reason agent-reconnected, once no other agent of it
// is still disconnected. A session not disconnected from the agent, or
// whose kernels on it are not in running, returns no events: a kernel
// that ended meanwhile comes back through its own report (see
// ReportKernel), which reconnects the session and ends the kernel.
func (s *Session) Reconnect(agentID string, running []uuid.UUID, at time.Time) ([]Event, error) {
	const op = "session.reconnect"
	if err := s.checkAgentChange(op, agentID, at); err != nil {
		return nil, err
	}
	if !slices.Contains(s.disconnectedFrom, agentID) || !s.hasLiveKernelOn(agentID, running) {
		return nil, nil
	}
	return []Event{s.reconnected(agentID, at)}, nil
}

func (s *Session) checkAgentChange(op, agentID string, at time.Time) error {
	switch {
	case !s.exists:
		return s.notFound(op)
	case agentID == "":
		return Invalid(op, "agent_id", "required")
	case at.IsZero():
		return Invalid(op, "at", "must be set")
	}
	return nil
}

// hasLiveKernelOn reports whether a kernel of the session that has not
// ended is placed on the agent (and, when among is not nil, is in among).
func (s *Session) hasLiveKernelOn(agentID string, among []uuid.UUID) bool {
	for _, k := range s.kernels {
		if k.agentID == agentID && !k.status.IsTerminal() && (among == nil || slices.Contains(among, k.id)) {
			return true
		}
	}
	return false
}

// reconnected is the event of agent's return: the status to go back to is
// the one the kernels imply, unless another agent is still disconnected.
func (s *Session) reconnected(agentID string, at time.Time) SessionReconnected {
	e := SessionReconnected{AgentID: agentID, Reason: ReasonAgentReconnected, At: at}
	if len(s.disconnectedFrom) == 1 {
		e.Status = deriveSessionStatus(s.resumeStatus, s.kernels)
	}
	return e
}

// resumed is a copy of a DISCONNECTED session as it would be had it not
// been disconnected (its status before), for deciding what a kernel's
// report means; s itself otherwise.
func (s *Session) resumed() *Session {
	if s.status != StatusDisconnected {
		return s
	}
	v := *s
	v.status, v.statusReason = s.resumeStatus, s.resumeReason
	return &v
}

// withEvent returns a copy of s with ev folded in, for deciding on what
// follows ev in the same append.
func (s *Session) withEvent(op string, ev Event) (*Session, error) {
	after := *s
	after.kernels = s.cloneKernels()
	after.disconnectedFrom = slices.Clone(s.disconnectedFrom)
	if err := after.apply(ev); err != nil {
		return nil, &Error{Op: op, Kind: KindInternal, Err: err}
	}
	return &after, nil
}

// applyDisconnected folds session.disconnected.
func (s *Session) applyDisconnected(e SessionDisconnected) {
	if len(s.disconnectedFrom) == 0 {
		s.resumeStatus, s.resumeReason = s.status, s.statusReason
		s.status, s.statusReason = StatusDisconnected, e.Reason
	}
	if i, found := slices.BinarySearch(s.disconnectedFrom, e.AgentID); !found {
		s.disconnectedFrom = slices.Insert(s.disconnectedFrom, i, e.AgentID)
	}
}

// applyReconnected folds session.reconnected.
func (s *Session) applyReconnected(e SessionReconnected) {
	s.disconnectedFrom = slices.DeleteFunc(s.disconnectedFrom, func(id string) bool { return id == e.AgentID })
	if e.Status == "" {
		return
	}
	s.setStatus(e.Status, e.Reason)
	if e.Status == StatusRunning && s.startedAt.IsZero() {
		s.startedAt = e.At
	}
}
