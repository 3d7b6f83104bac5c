package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// startingPhases are the statuses a session passes before it runs
// (domain.SessionStatus.IsStarting), in order; each gets
// Config.StartTimeout.
var startingPhases = []domain.SessionStatus{
	domain.StatusScheduled, domain.StatusPreparing, domain.StatusPulling, domain.StatusPrepared, domain.StatusCreating,
}

// expirePending cancels the sessions PENDING for longer than
// Config.PendingTimeout (reason pending-timeout) and returns those it
// cancelled, which the round then leaves out. A session scheduled meanwhile
// refuses (conflict) and is left alone.
func (s *Scheduler) expirePending(ctx context.Context, st *state, now time.Time) map[uuid.UUID]bool {
	ended := map[uuid.UUID]bool{}
	if s.cfg.PendingTimeout <= 0 {
		return ended
	}
	for _, sv := range st.sessionsIn(domain.StatusPending) {
		if ctx.Err() != nil || now.Before(sv.requestedAt.Add(s.cfg.PendingTimeout)) {
			continue
		}
		res, err := s.handlers.CancelPendingSession.Handle(ctx, s.md, commands.CancelPendingSession{
			SessionID: sv.id, Reason: domain.ReasonPendingTimeout,
		})
		if err != nil {
			s.logger.Log(ctx, s.levelFor(err), "cannot cancel a session past its pending timeout", "session_id", sv.id, "error", err)
			continue
		}
		ended[sv.id] = true
		s.wrote(res.Position)
		s.logger.Info("session cancelled", "session_id", sv.id, "reason", domain.ReasonPendingTimeout, "pending_for", now.Sub(sv.requestedAt))
	}
	return ended
}

// enforceDeadlines ends the sessions stuck in a phase (no session may stay
// in a non-terminal phase forever):
// Deadlines count from when the session entered its phase, or from the
// scheduler's start if that is later (see phaseStart):
//   - a session in one phase between SCHEDULED and CREATING for longer
//     than Config.StartTimeout goes to ERROR (failed-to-start), reported
//     for its least advanced kernel, which releases its allocations (a
//     DISCONNECTED session has no such deadline: its agent's lost timeout
//     bounds it, and its phase counts afresh from its return);
//   - a DISCONNECTED session whose agents are all back, but whose kernel
//     they never reported, goes to ERROR (kernel-lost) Config.StartTimeout
//     after the last came back (an agent that returns reports its kernels
//     within seconds; one that does not has lost them);
//   - a session TERMINATING for longer than Config.TerminatingTimeout is
//     force-terminated (TERMINATED, force-terminated), which releases its
//     allocations, and the releases send kernel.destroy to the agents once
//     more.
func (s *Scheduler) enforceDeadlines(ctx context.Context, st *state, now time.Time) {
	if s.cfg.StartTimeout > 0 {
		for _, sv := range st.sessionsIn(startingPhases...) {
			if ctx.Err() == nil && !now.Before(s.phaseStart(sv).Add(s.cfg.StartTimeout)) {
				s.failToStart(ctx, sv)
			}
		}
	}
	if s.cfg.StartTimeout > 0 {
		for _, sv := range st.sessionsIn(domain.StatusDisconnected) {
			if back, ok := st.backSince(sv); ok && ctx.Err() == nil && !now.Before(latest(s.phaseStart(sv), back).Add(s.cfg.StartTimeout)) {
				s.failUnreported(ctx, sv, back)
			}
		}
	}
	if s.cfg.TerminatingTimeout > 0 {
		for _, sv := range st.sessionsIn(domain.StatusTerminating) {
			if ctx.Err() == nil && !now.Before(s.phaseStart(sv).Add(s.cfg.TerminatingTimeout)) {
				s.forceTerminate(ctx, sv, now)
			}
		}
	}
}

// phaseStart is when a session's phase deadline starts counting: when it
// entered the phase, or when this scheduler started if that is later.
func (s *Scheduler) phaseStart(sv *sessionView) time.Time {
	if s.started.After(sv.since) {
		return s.started
	}
	return sv.since
}

func (s *Scheduler) failToStart(ctx context.Context, sv *sessionView) {
	k, ok := sv.laggingKernel()
	if !ok {
		return
	}
	res, err := s.handlers.ReportKernelStatus.Handle(ctx, s.md, commands.ReportKernelStatus{
		SessionID: sv.id, KernelID: k.id, AgentID: k.agentID, Phase: domain.PhaseFailed,
		Reason:  domain.ReasonFailedToStart,
		Message: fmt.Sprintf("the session stayed %s longer than the start timeout (%s)", sv.status, s.cfg.StartTimeout),
		// The view may lag the session: if it has moved on (it runs, or
		// is being terminated), the verdict no longer applies.
		WhileStarting: true,
	})
	if err != nil {
		s.logger.Log(ctx, s.levelFor(err), "cannot fail a session past its start timeout", "session_id", sv.id, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Warn("session failed to start in time", "session_id", sv.id, "kernel_id", k.id, "agent_id", k.agentID, "status", sv.status)
}

// backSince reports whether every agent a DISCONNECTED session waits for
// is reachable again, and since when (the latest return).
func (st *state) backSince(sv *sessionView) (time.Time, bool) {
	var back time.Time
	for _, id := range sv.awaiting {
		a := st.agents[id]
		if a == nil || a.unreachable {
			return time.Time{}, false
		}
		back = latest(back, a.backAt)
	}
	return back, len(sv.awaiting) > 0
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// failUnreported fails a DISCONNECTED session through a kernel its
// returned agent never reported: the report reconnects the session and
// ends it in ERROR (kernel-lost), which releases its allocations.
func (s *Scheduler) failUnreported(ctx context.Context, sv *sessionView, back time.Time) {
	for _, k := range sv.kernels {
		if !slices.Contains(sv.awaiting, k.agentID) || k.status.IsTerminal() {
			continue
		}
		res, err := s.handlers.ReportKernelStatus.Handle(ctx, s.md, commands.ReportKernelStatus{
			SessionID: sv.id, KernelID: k.id, AgentID: k.agentID, Phase: domain.PhaseFailed,
			Reason:  domain.ReasonKernelLost,
			Message: fmt.Sprintf("agent %s came back at %s and has not reported the kernel since", k.agentID, back.Format(time.RFC3339)),
		})
		if err != nil {
			s.logger.Log(ctx, s.levelFor(err), "cannot fail a session its returned agent does not report", "session_id", sv.id, "error", err)
			return
		}
		s.wrote(res.Position)
		s.logger.Warn("session failed: its agent came back without its kernel", "session_id", sv.id, "kernel_id", k.id, "agent_id", k.agentID)
		return
	}
}

func (s *Scheduler) forceTerminate(ctx context.Context, sv *sessionView, now time.Time) {
	res, err := s.handlers.ForceTerminateSession.Handle(ctx, s.md, commands.ForceTerminateSession{SessionID: sv.id})
	if err != nil {
		s.logger.Log(ctx, s.levelFor(err), "cannot force-terminate a session past its terminating timeout", "session_id", sv.id, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Warn("session force-terminated", "session_id", sv.id, "terminating_for", now.Sub(sv.since))
}

// laggingKernel is the placed kernel that is furthest from running (the
// one holding the session in its phase).
func (sv *sessionView) laggingKernel() (kernelView, bool) {
	best, found := kernelView{}, false
	for _, k := range sv.kernels {
		if k.agentID == "" || k.status.IsTerminal() || k.status == domain.StatusRunning {
			continue
		}
		if !found || phaseRank(k.status) < phaseRank(best.status) {
			best, found = k, true
		}
	}
	return best, found
}

func phaseRank(s domain.SessionStatus) int {
	for i, p := range startingPhases {
		if p == s {
			return i
		}
	}
	return len(startingPhases)
}
