package scheduler

import (
	"context"
	"log/slog"
	"slices"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// round checks the timeouts, then places every PENDING session it can
// (Place over the folded view) and records why the others wait. One
// session's failure never stops the round.
func (s *Scheduler) round(ctx context.Context, st *state) {
	now := s.cfg.Clock()
	ended := s.expirePending(ctx, st, now)
	s.enforceDeadlines(ctx, st, now)

	var requests []Request
	for _, r := range st.pending() {
		if !ended[r.SessionID] {
			requests = append(requests, r)
		}
	}
	if len(requests) == 0 {
		return
	}
	plan := place(requests, st.nodes(), st.admission(requests))
	for _, p := range plan.Placed {
		if ctx.Err() != nil {
			return
		}
		s.schedule(ctx, p)
	}
	for _, u := range plan.Unplaced {
		if ctx.Err() != nil {
			return
		}
		s.keepPending(ctx, st.sessions[u.SessionID], u)
	}
	if len(plan.Placed) > 0 || len(plan.Unplaced) > 0 {
		s.logger.Debug("round", "placed", len(plan.Placed), "waiting", len(plan.Unplaced), "position", st.position)
	}
}

// schedule submits one placement. A refusal is logged and the session
// stays PENDING for the next round: the agent's stream had changed under
// the folded view (quota-exceeded), or the session was cancelled meanwhile
// (conflict).
func (s *Scheduler) schedule(ctx context.Context, p Placement) {
	res, err := s.handlers.ScheduleSession.Handle(ctx, s.md, commands.ScheduleSession{SessionID: p.SessionID, Kernels: p.Kernels})
	if err != nil {
		level := s.levelFor(err)
		s.logger.Log(ctx, level, "placement refused", "session_id", p.SessionID, "agent_id", p.Kernels[0].AgentID, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Info("session scheduled", "session_id", p.SessionID, "agent_id", p.Kernels[0].AgentID, "kernels", len(p.Kernels))
}

// keepPending records why a session waits, when the reasons differ from
// those it already carries: a session waiting for the same reasons costs
// no event per round.
func (s *Scheduler) keepPending(ctx context.Context, sv *sessionView, u Unplaced) {
	if sv == nil {
		return
	}
	sv.attempts++
	if sv.statusReason == u.Reason && slices.Equal(sv.pendingDetails, u.Details) {
		return
	}
	res, err := s.handlers.UpdatePendingSession.Handle(ctx, s.md, commands.UpdatePendingSession{
		SessionID: u.SessionID, Reason: u.Reason, Details: u.Details, Tries: sv.attempts,
	})
	if err != nil {
		s.logger.Log(ctx, s.levelFor(err), "cannot record why a session waits", "session_id", u.SessionID, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Info("session waits", "session_id", u.SessionID, "reason", u.Reason, "details", u.Details)
}

// levelFor logs the expected refusals (the state moved under a decision)
// at info, the rest as warnings.
func (s *Scheduler) levelFor(err error) slog.Level {
	switch domain.KindOf(err) {
	case domain.KindConflict, domain.KindQuotaExceeded, domain.KindNotFound:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}
