package commands

import (
	"context"
	"errors"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// ScheduleSession is the scheduler's placement of a PENDING session: the
// agent of every kernel and the devices (with amounts) it takes there.
type ScheduleSession struct {
	SessionID uuid.UUID
	Kernels   []domain.KernelPlacement
}

func (ScheduleSession) CommandName() string { return "session.schedule" }

// compensationTimeout bounds the clean-up after a failed schedule, which
// runs even when the caller's context is done.
const compensationTimeout = 10 * time.Second

type scheduleSessionHandler struct {
	planApplier
	clock
}

// newScheduleSessionHandler builds the handler over what it uses.
func newScheduleSessionHandler(planApplier planApplier, now clock) scheduleSessionHandler {
	return scheduleSessionHandler{planApplier: planApplier, clock: now}
}

// Handle places the session through the plan applier (applyPlans) that
// scheduling rounds use, as a round of one:
//
//  1. On each agent of the placement, allocate the kernels placed there
//     (domain.Agent.AllocateEach) with the agent's expected revision,
//     all agents in one append; an agent that moved meanwhile is decided
//     again on fresh state. This is what makes oversubscription
//     impossible: two placements racing for the same capacity or the same
//     GPU share are serialised by the agent stream's revision, and the
//     loser re-decides on the winner's state (and gets KindQuotaExceeded
//     if it no longer fits).
//  2. On the session's stream, record session.scheduled
//     (domain.Session.Schedule), deciding again if the stream moved.
//
// If step 1 fails, nothing was allocated, unless its append may have
// landed after all: then the allocations are released (releasing is
// idempotent). If step 2 fails — the session was cancelled meanwhile
// (KindConflict), or retries ran out — the allocations are released too
// (reason schedule-aborted). If step 2's append failed in a way that may
// have written it (I/O error, cancelled context), the session is read back
// first and the allocations are kept if it is scheduled with this
// placement; if it cannot be read back they are kept as well, since a
// SCHEDULED session without its allocation would be worse than a
// temporary leak.
//
// Crash window: a crash (or a failed clean-up) between step 1 and step 2
// leaves allocations on the agents for a session still PENDING. That
// capacity looks occupied — the safe side: nothing is ever allocated
// twice — until one of two things repairs it: re-running ScheduleSession
// with the same placement completes it (identical re-allocations are
// idempotent), or the scheduler's startup reconcile, which runs before its
// first round, releases with reason schedule-aborted every allocation
// whose session does not hold that kernel on that agent in a
// resource-holding status (PENDING, ended, or placed elsewhere).
//
// A session already scheduled with exactly this placement succeeds without
// appending anything; any other non-PENDING session is KindConflict. One
// scheduler (the leader) places a given session at a time: two callers
// placing the same session concurrently could release each other's
// allocations in their clean-up.
func (h scheduleSessionHandler) Handle(ctx context.Context, md Metadata, cmd ScheduleSession) (Result, error) {
	res, err := h.applyPlans(ctx, md, h.now(), ScheduleSessions{Placements: []SessionPlacement{{SessionID: cmd.SessionID, Kernels: cmd.Kernels}}})
	if refused, ok := res.Refused[cmd.SessionID]; ok {
		return Result{}, errors.Join(refused, err)
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Position: res.Position}, nil
}

// allocationRequests groups the placed kernels' requests by agent.
func allocationRequests(s *domain.Session, placements []domain.KernelPlacement) map[string][]domain.AllocationRequest {
	out := map[string][]domain.AllocationRequest{}
	for _, p := range placements {
		k, _ := s.Kernel(p.KernelID) // Schedule checked every kernel is the session's
		out[p.AgentID] = append(out[p.AgentID], domain.AllocationRequest{
			KernelID: p.KernelID, SessionID: s.ID(), Slots: k.Requested(), Devices: p.Devices,
		})
	}
	return out
}
