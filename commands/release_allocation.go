package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// ReleaseAllocation gives back what one kernel holds on an agent when no
// session stands behind it any more: the scheduler's start-up reconcile
// sends it for an allocation left by a crash between ScheduleSession's two
// steps (see ScheduleSession). Reason defaults to schedule-aborted.
type ReleaseAllocation struct {
	AgentID  string
	KernelID uuid.UUID
	Reason   string
}

func (ReleaseAllocation) CommandName() string { return "agent.release-allocation" }

type releaseAllocationHandler struct {
	sessions repository[*domain.Session]
	releaser
	clock
}

// newReleaseAllocationHandler builds the handler over what it uses.
func newReleaseAllocationHandler(sessions repository[*domain.Session], releaser releaser, now clock) releaseAllocationHandler {
	return releaseAllocationHandler{sessions: sessions, releaser: releaser, clock: now}
}

// errAllocationInUse: the allocation belongs to a session that holds it.
var errAllocationInUse = domain.Errorf("agent.release-allocation", domain.KindConflict,
	"the allocation belongs to a session scheduled with it")

// Handle releases the allocation unless its session was scheduled with
// that kernel on that agent and has not ended (KindConflict: ending the
// session releases it). Releasing nothing — no such allocation, an agent
// that never registered — succeeds without appending.
//
// The check and the release are two reads apart: a ScheduleSession that
// completes in between would leave a SCHEDULED session without its
// allocation. Only the scheduler sends this, and only while it is the one
// placing sessions (before its first round), which excludes that race.
func (h releaseAllocationHandler) Handle(ctx context.Context, md Metadata, cmd ReleaseAllocation) (Result, error) {
	const op = "agent.release-allocation"
	if cmd.AgentID == "" || cmd.KernelID == uuid.Nil {
		return Result{}, domain.Invalid(op, "agent_id", "agent and kernel are required")
	}
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonScheduleAborted
	}
	at := h.now()
	agent, err := h.agents.load(ctx, domain.AgentStream(cmd.AgentID))
	if err != nil {
		return Result{}, err
	}
	held, ok := agent.agg.Allocation(cmd.KernelID)
	if !ok {
		return Result{Position: agent.position}, nil
	}
	session, err := h.sessions.load(ctx, domain.SessionStream(held.SessionID))
	if err != nil {
		return Result{}, err
	}
	if s := session.agg; s.Exists() && s.Status().HoldsResources() {
		if k, ok := s.Kernel(cmd.KernelID); ok && k.AgentID() == cmd.AgentID {
			return Result{}, errAllocationInUse
		}
	}
	pos, err := h.releaseAll(ctx, md, []release{{agentID: cmd.AgentID, kernelID: cmd.KernelID, reason: reason}}, at)
	return Result{Position: pos}, err
}
