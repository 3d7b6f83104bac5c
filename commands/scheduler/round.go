package scheduler

import (
	"context"
	"log/slog"
	"slices"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// round checks the timeouts, then places every PENDING session it can
// (placement.Place over the folded view) and records why the others wait.
// One session's failure never stops the round.
func (s *Scheduler) round(ctx context.Context, st *state) {
	now := s.cfg.Clock()
	ended := s.expirePending(ctx, st, now)
	s.enforceDeadlines(ctx, st, now)

	in := st.input(now, ended)
	if len(in.Sessions) == 0 {
		return
	}
	plan, err := placement.Place(in)
	if err != nil {
		// The folded view is built so that this cannot happen (ids are
		// unique by construction); say so loudly and try again next round.
		s.logger.Error("placement refused its input", "error", err)
		return
	}
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
	s.logger.Debug("round", "placed", len(plan.Placed), "waiting", len(plan.Unplaced), "position", st.position)
}

// schedule submits one placement. A refusal is logged and the session
// stays PENDING for the next round: the agent's stream had changed under
// the folded view (quota-exceeded), or the session was cancelled meanwhile
// (conflict).
func (s *Scheduler) schedule(ctx context.Context, p placement.Placement) {
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
// no event per round. A session that was tried counts one more try; one
// that waited behind another (fifo) does not.
func (s *Scheduler) keepPending(ctx context.Context, sv *sessionView, u placement.Unplaced) {
	if sv == nil {
		return
	}
	if u.Tried {
		sv.attempts++
	}
	details := u.Details()
	if sv.statusReason == u.Reason && slices.Equal(sv.pendingDetails, details) {
		return
	}
	res, err := s.handlers.UpdatePendingSession.Handle(ctx, s.md, commands.UpdatePendingSession{
		SessionID: u.SessionID, Reason: u.Reason, Details: details, Tries: sv.attempts,
	})
	if err != nil {
		s.logger.Log(ctx, s.levelFor(err), "cannot record why a session waits", "session_id", u.SessionID, "error", err)
		return
	}
	s.wrote(res.Position)
	s.logger.Info("session waits", "session_id", u.SessionID, "reason", u.Reason, "details", details)
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
