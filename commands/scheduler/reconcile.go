package scheduler

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

// allocationRef names one allocation of the folded view.
type allocationRef struct {
	agentID string
	alloc   domain.Allocation
}

// reconcile repairs the allocations that no session holds: what a crash
// between ScheduleSession's two steps (agents first, then the session), a
// clean-up that failed, or a crash after a session's end (before its
// release) leaves behind. It runs before the first round and then with
// every periodic round: only this scheduler allocates, from this
// goroutine, so no placement is half-made while it runs, and it acts on
// a view that has folded the scheduler's own writes. For each allocation,
// by its session in the folded view:
//
//   - scheduled (or later, not ended) with that kernel on that agent: fine;
//   - PENDING, with an allocation for every kernel that together make a
//     valid placement: completed, by ScheduleSession with that placement
//     (the allocations are identical, so only session.scheduled is
//     written);
//   - PENDING otherwise, or scheduled with the kernel elsewhere: released
//     (ReleaseAllocation, schedule-aborted); a later round places the
//     session afresh;
//   - ended, or never requested: TerminateSession (which releases an ended
//     session's placed kernels with their own reasons) and then
//     ReleaseAllocation for whatever is left.
//
// The commands re-check on fresh state (ReleaseAllocation refuses to
// release what a scheduled session holds; completing an already scheduled
// placement appends nothing). Failures are logged: the capacity stays
// occupied, the safe side, until the next try.
func (s *Scheduler) reconcile(ctx context.Context, st *state) {
	bySession := map[uuid.UUID][]allocationRef{}
	for _, id := range slices.Sorted(maps.Keys(st.agents)) {
		for _, al := range st.agents[id].allocations {
			bySession[al.SessionID] = append(bySession[al.SessionID], allocationRef{agentID: id, alloc: al})
		}
	}
	for _, sid := range slices.SortedFunc(maps.Keys(bySession), func(a, b uuid.UUID) int { return cmp.Compare(a.String(), b.String()) }) {
		if ctx.Err() != nil {
			return
		}
		refs := bySession[sid]
		sv := st.sessions[sid]
		switch {
		case sv == nil:
			s.releaseEnded(ctx, sid, refs)
		case sv.status == domain.StatusPending:
			if placement, ok := sv.placementFrom(refs); ok {
				s.complete(ctx, placement)
			} else {
				s.release(ctx, refs)
			}
		default:
			var stray []allocationRef
			for _, r := range refs {
				if k := sv.kernel(r.alloc.KernelID); k == nil || k.agentID != r.agentID {
					stray = append(stray, r)
				}
			}
			s.release(ctx, stray)
		}
	}
}

// placementFrom returns the placement the allocations make for a PENDING
// session, if they cover every kernel exactly once as the session's
// cluster mode allows.
func (sv *sessionView) placementFrom(refs []allocationRef) (placement.Placement, bool) {
	if len(refs) != len(sv.kernels) {
		return placement.Placement{}, false
	}
	byKernel := map[uuid.UUID]allocationRef{}
	for _, r := range refs {
		byKernel[r.alloc.KernelID] = r
	}
	p := placement.Placement{SessionID: sv.id}
	for _, k := range sv.kernels {
		r, ok := byKernel[k.id]
		if !ok {
			return placement.Placement{}, false
		}
		if sv.clusterMode != domain.ClusterMultiNode && len(p.Kernels) > 0 && p.Kernels[0].AgentID != r.agentID {
			return placement.Placement{}, false
		}
		p.Kernels = append(p.Kernels, domain.KernelPlacement{KernelID: k.id, AgentID: r.agentID, Devices: slices.Clone(r.alloc.Devices)})
	}
	return p, true
}

func (s *Scheduler) complete(ctx context.Context, p placement.Placement) {
	res, err := s.handlers.ScheduleSession.Handle(ctx, s.md, commands.ScheduleSession{SessionID: p.SessionID, Kernels: p.Kernels})
	if err != nil {
		s.logger.Warn("reconcile: cannot complete a half-made placement", "session_id", p.SessionID, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Info("reconcile: completed a half-made placement", "session_id", p.SessionID)
}

func (s *Scheduler) releaseEnded(ctx context.Context, sid uuid.UUID, refs []allocationRef) {
	res, err := s.handlers.TerminateSession.Handle(ctx, s.md, commands.TerminateSession{SessionID: sid})
	switch {
	case err == nil:
		s.wrote(res.Position)
	case domain.KindOf(err) != domain.KindNotFound:
		s.logger.Warn("reconcile: cannot release an ended session's allocations", "session_id", sid, "error", err)
	}
	s.release(ctx, refs)
}

func (s *Scheduler) release(ctx context.Context, refs []allocationRef) {
	for _, r := range refs {
		res, err := s.handlers.ReleaseAllocation.Handle(ctx, s.md, commands.ReleaseAllocation{
			AgentID: r.agentID, KernelID: r.alloc.KernelID, Reason: domain.ReasonScheduleAborted,
		})
		if err != nil {
			s.logger.Warn("reconcile: cannot release an allocation", "agent_id", r.agentID, "kernel_id", r.alloc.KernelID,
				"session_id", r.alloc.SessionID, "error", err)
			continue
		}
		s.wrote(res.Position)
		s.logger.Info("reconcile: released an allocation no session holds", "agent_id", r.agentID,
			"kernel_id", r.alloc.KernelID, "session_id", r.alloc.SessionID)
	}
}
