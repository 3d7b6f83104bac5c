package commands

import (
	"context"
	"errors"
	"sort"
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

type scheduleSessionHandler struct{ deps }

// Handle places the session in two steps, agents first:
//
//  1. On each agent's stream (in agent-id order), allocate the kernels
//     placed there (domain.Agent.AllocateKernels) with the agent's expected
//     revision, retrying on conflict with fresh state. This is what makes
//     oversubscription impossible: two placements racing for the same
//     capacity or the same GPU share are serialised by the agent stream's
//     revision, and the loser re-decides on the winner's state (and gets
//     KindQuotaExceeded if it no longer fits).
//  2. On the session's stream, record session.scheduled
//     (domain.Session.Schedule), retrying likewise.
//
// If step 1 fails on an agent, the allocations made on the agents before
// it are released, and on the failing agent too when its append may have
// landed after all (releasing is idempotent). If step 2 fails — the session was cancelled
// meanwhile (KindConflict), or retries ran out — the allocations are
// released too (reason schedule-aborted). If step 2's append failed in a
// way that may have written it (I/O error, cancelled context), the session
// is read back first and the allocations are kept if it is scheduled with
// this placement; if it cannot be read back they are kept as well, since a
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
	at := h.now()
	stream := domain.SessionStream(cmd.SessionID)
	l, err := h.sessions.load(ctx, stream)
	if err != nil {
		return Result{}, err
	}
	// Decide once up front (pure) to validate the placement and to refuse a
	// session that is not PENDING before touching any agent.
	events, err := l.agg.Schedule(cmd.Kernels, at)
	if err != nil {
		return Result{}, err
	}
	if len(events) == 0 {
		return Result{Position: l.position}, nil
	}
	scheduled, ok := events[0].(domain.SessionScheduled)
	if !ok {
		return Result{}, domain.Errorf("session.schedule", domain.KindInternal, "Schedule returned %s", events[0].EventType())
	}
	placements := scheduled.Kernels
	requests := allocationRequests(l.agg, placements)

	var last uint64
	agents := make([]string, 0, len(requests))
	for id := range requests {
		agents = append(agents, id)
	}
	sort.Strings(agents)
	for i, id := range agents {
		_, pos, err := h.agents.update(ctx, domain.AgentStream(id), md, func(a *domain.Agent) ([]domain.Event, error) {
			return a.AllocateKernels(requests[id], at)
		})
		if err != nil {
			// Release what this placement allocated: the agents before this
			// one, and this one too if its append may have landed.
			done := agents[:i]
			if appendUncertain(err) {
				done = agents[:i+1]
			}
			return Result{}, errors.Join(err, h.abort(ctx, md, onAgents(placements, done), at))
		}
		last = max(last, pos)
	}

	_, pos, err := h.sessions.update(ctx, stream, md, func(s *domain.Session) ([]domain.Event, error) {
		return s.Schedule(placements, at)
	})
	if err == nil {
		return Result{Position: max(last, pos)}, nil
	}
	if appendUncertain(err) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
		defer cancel()
		back, lerr := h.sessions.load(cctx, stream)
		if lerr != nil {
			return Result{}, errors.Join(err, lerr) // keep the allocations: see above
		}
		if back.agg.HasPlacement(placements) {
			return Result{Position: max(last, back.position)}, nil
		}
	}
	return Result{}, errors.Join(err, h.abort(ctx, md, placements, at))
}

// abort releases every allocation of the placement, even when ctx is done.
func (h scheduleSessionHandler) abort(ctx context.Context, md Metadata, placements []domain.KernelPlacement, at time.Time) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	releases := make([]release, len(placements))
	for i, p := range placements {
		releases[i] = release{agentID: p.AgentID, kernelID: p.KernelID, reason: domain.ReasonScheduleAborted}
	}
	_, err := h.releaseAll(cctx, md, releases, at)
	return err
}

// onAgents returns the placements on the given agents.
func onAgents(placements []domain.KernelPlacement, agents []string) []domain.KernelPlacement {
	var out []domain.KernelPlacement
	for _, p := range placements {
		for _, id := range agents {
			if p.AgentID == id {
				out = append(out, p)
			}
		}
	}
	return out
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
