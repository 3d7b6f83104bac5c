package domain

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Schedule records where the scheduler placed the session's kernels. Every
// kernel must be placed exactly once, on a named agent (the same one for a
// single-node session), with devices matching its accelerator slot. The
// agents' allocations must already be recorded (commands.ScheduleSession
// does that first).
//
// Only a PENDING session can be scheduled: anything else is KindConflict,
// except that scheduling a session again with the placement it already has
// (while it has not ended) returns no events, so a scheduler that retries
// after an ambiguous failure converges.
func (s *Session) Schedule(placements []KernelPlacement, at time.Time) ([]Event, error) {
	const op = "session.schedule"
	if !s.exists {
		return nil, s.notFound(op)
	}
	if at.IsZero() {
		return nil, Invalid(op, "at", "must be set")
	}
	if s.status != StatusPending {
		if !s.status.IsTerminal() && s.HasPlacement(placements) {
			return nil, nil
		}
		return nil, Errorf(op, KindConflict, "session is %s: only a PENDING session can be scheduled", s.status)
	}
	normalized, err := s.checkPlacements(op, placements)
	if err != nil {
		return nil, err
	}
	return []Event{SessionScheduled{Kernels: normalized, Reason: ReasonScheduled, At: at}}, nil
}

// HasPlacement reports whether the session was scheduled with exactly
// these placements (device order does not matter).
func (s *Session) HasPlacement(placements []KernelPlacement) bool {
	if !s.exists || s.scheduledAt.IsZero() || len(placements) != len(s.kernels) {
		return false
	}
	for _, p := range placements {
		i := s.kernelIndex(p.KernelID)
		if i < 0 || s.kernels[i].agentID != p.AgentID || !equalShares(s.kernels[i].devices, p.Devices) {
			return false
		}
	}
	return true
}

// checkPlacements validates placements against the kernels and returns
// them in kernel order with devices sorted.
func (s *Session) checkPlacements(op string, placements []KernelPlacement) ([]KernelPlacement, error) {
	if len(placements) != len(s.kernels) {
		return nil, Invalid(op, "kernels", "%d placements for %d kernels", len(placements), len(s.kernels))
	}
	byKernel := make(map[uuid.UUID]KernelPlacement, len(placements))
	for _, p := range placements {
		if s.kernelIndex(p.KernelID) < 0 {
			return nil, Invalid(op, "kernels", "kernel %s is not in this session", p.KernelID)
		}
		if _, dup := byKernel[p.KernelID]; dup {
			return nil, Invalid(op, "kernels", "kernel %s placed twice", p.KernelID)
		}
		if p.AgentID == "" {
			return nil, Invalid(op, "kernels.agent_id", "kernel %s has no agent", p.KernelID)
		}
		byKernel[p.KernelID] = p
	}
	out := make([]KernelPlacement, len(s.kernels))
	for i, k := range s.kernels {
		p := byKernel[k.id]
		if err := checkDeviceShares(op, "kernels.devices", k.requested, p.Devices); err != nil {
			return nil, err
		}
		if i > 0 && s.clusterMode != ClusterMultiNode && p.AgentID != out[0].AgentID {
			return nil, Invalid(op, "kernels.agent_id", "a single-node session cannot span agents %s and %s", out[0].AgentID, p.AgentID)
		}
		out[i] = KernelPlacement{KernelID: k.id, AgentID: p.AgentID, Devices: sortedShares(p.Devices)}
	}
	return out, nil
}

// UpdatePending records why the scheduler could not place a PENDING
// session (reason e.g. no-available-instances, details every failed check,
// tries the scheduler's count of attempts). Nothing is recorded when the
// reason and details are those already recorded, so a scheduler retrying
// every tick does not grow the stream. A session that is no longer PENDING
// is KindConflict.
func (s *Session) UpdatePending(reason string, details []string, tries int, at time.Time) ([]Event, error) {
	const op = "session.update-pending"
	if !s.exists {
		return nil, s.notFound(op)
	}
	switch {
	case reason == "":
		return nil, Invalid(op, "reason", "required")
	case tries < 0:
		return nil, Invalid(op, "tries", "must not be negative")
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	}
	if s.status != StatusPending {
		return nil, Errorf(op, KindConflict, "session is %s, not PENDING", s.status)
	}
	if reason == s.statusReason && slices.Equal(details, s.pendingDetails) {
		return nil, nil
	}
	return []Event{SessionPendingUpdated{Reason: reason, Details: append([]string(nil), details...), Tries: tries, At: at}}, nil
}
