package scheduler

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// round checks the timeouts, then places every PENDING session it can
// (placement.Place over the folded view) and records why the others wait:
// a full round. One session's failure never stops the round.
func (s *Scheduler) round(ctx context.Context, st *state) {
	now := s.cfg.Clock()
	ended := s.expirePending(ctx, st, now)
	s.enforceDeadlines(ctx, st, now)
	s.place(ctx, st, st.input(now, ended, s.cfg.Queue), "round")
}

// checkTimeouts is a periodic round's work when no placement could have
// changed (see state.placementDue): the timeouts only. A session it
// cancels or ends wakes a full round through its event.
func (s *Scheduler) checkTimeouts(ctx context.Context, st *state, now time.Time) {
	s.expirePending(ctx, st, now)
	s.enforceDeadlines(ctx, st, now)
}

// arrivalsRound places the sessions requested since the last round, when
// nothing else changed: it costs what arrived, not the queue's length
// (see state.arrivalsInput for why that decides as a full round would).
func (s *Scheduler) arrivalsRound(ctx context.Context, st *state) {
	s.place(ctx, st, st.arrivalsInput(s.cfg.Clock(), s.cfg.Queue), "arrivals round")
}

// place decides in's sessions, writes the placements and the reasons of
// the sessions left waiting, and notes which of them may block a fifo
// queue. A refused placement (the view moved under it) makes the next
// periodic round a full one (state.placementDue).
func (s *Scheduler) place(ctx context.Context, st *state, in placement.Input, kind string) {
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
	report := RoundReport{Waiting: len(plan.Unplaced), Sessions: len(in.Sessions)}
	// The placements and the reasons of the sessions left waiting touch
	// different sessions: they are written at the same time.
	updates := s.pendingUpdates(st, plan.Unplaced)
	for _, p := range plan.Placed {
		if sv := st.sessions[p.SessionID]; sv != nil {
			st.setMayBlock(sv, false)
		}
	}
	var pendingPos uint64
	var wg sync.WaitGroup
	if len(updates) > 0 {
		wg.Go(func() { pendingPos = s.keepPending(ctx, updates) })
	}
	if len(plan.Placed) > 0 {
		report.Placed, report.Refused = s.scheduleAll(ctx, st, plan.Placed)
	}
	wg.Wait()
	s.wrote(pendingPos)
	report.Position = s.waitFor
	level := slog.LevelDebug
	if report.Placed+report.Refused > 0 {
		level = slog.LevelInfo
	}
	s.logger.Log(ctx, level, kind, "sessions", report.Sessions, "placed", report.Placed, "refused", report.Refused, "waiting", report.Waiting, "position", st.position)
	if s.cfg.OnRound != nil {
		s.cfg.OnRound(report)
	}
	st.retry = st.retry || report.Refused > 0
}

// scheduleAll writes the round's placements in one batch
// (commands.ScheduleSessions: one append per agent). A refused placement
// is logged and its session stays PENDING for the next round: an agent's
// stream had changed under the folded view (quota-exceeded), or the
// session was cancelled meanwhile (conflict).
func (s *Scheduler) scheduleAll(ctx context.Context, st *state, placed []placement.Placement) (scheduled, refused int) {
	cmd := commands.ScheduleSessions{Placements: make([]commands.SessionPlacement, len(placed)), Agents: map[string]*domain.Agent{}}
	for i, p := range placed {
		// The folded agents: the write expects their revision instead of
		// reading their streams again.
		for _, k := range p.Kernels {
			if a := st.agents[k.AgentID]; a != nil && a.agg != nil {
				cmd.Agents[k.AgentID] = a.agg
			}
		}
		cmd.Placements[i] = commands.SessionPlacement{SessionID: p.SessionID, Kernels: p.Kernels}
		// The folded session: the write expects its revision instead of
		// reading the stream again.
		if sv := st.sessions[p.SessionID]; sv != nil {
			known := &commands.KnownSession{Revision: sv.revision}
			for _, k := range sv.kernels {
				known.Kernels = append(known.Kernels, commands.KnownKernel{ID: k.id, Slots: k.slots})
			}
			cmd.Placements[i].Known = known
		}
	}
	res, err := s.handlers.ScheduleSessions.Handle(ctx, s.md, cmd)
	if err != nil {
		s.logger.Warn("placements written only in part", "error", err)
	}
	for id, why := range res.Refused {
		s.logger.Log(ctx, s.levelFor(why), "placement refused", "session_id", id, "error", why)
	}
	s.wrote(res.Position)
	return len(res.Scheduled), len(res.Refused)
}

// pendingUpdates are the reasons to record for the sessions left
// waiting, when they differ from those a session already carries: a
// session waiting for the same reasons costs no event per round. A session
// that was tried counts one more try; one that waited behind another
// (fifo) does not. Each session's mayBlock is updated: under fifo, one
// not tried, or one that found no room and has tries left before it is
// skipped, may block the sessions behind it in the next full round.
func (s *Scheduler) pendingUpdates(st *state, unplaced []placement.Unplaced) []commands.UpdatePendingSession {
	var out []commands.UpdatePendingSession
	skip := s.cfg.Queue.SkipAfterTries
	for _, u := range unplaced {
		sv := st.sessions[u.SessionID]
		if sv == nil {
			continue
		}
		if u.Tried {
			sv.attempts++
		}
		noRoom := u.Reason == domain.ReasonNoAvailableInstances && (skip == 0 || sv.attempts < skip)
		st.setMayBlock(sv, s.cfg.Queue.Order == placement.OrderFIFO && (!u.Tried || noRoom))
		details := u.Details()
		if sv.statusReason == u.Reason && slices.Equal(sv.pendingDetails, details) {
			continue
		}
		rev := sv.revision
		out = append(out, commands.UpdatePendingSession{
			SessionID: u.SessionID, Reason: u.Reason, Details: details, Tries: sv.attempts, KnownRevision: &rev,
		})
	}
	return out
}

// keepPending records the reasons (commands.UpdatePendingSessions: many
// per append, each expecting the folded revision) and returns the last
// position written.
func (s *Scheduler) keepPending(ctx context.Context, updates []commands.UpdatePendingSession) uint64 {
	res, err := s.handlers.UpdatePendingSessions.Handle(ctx, s.md, commands.UpdatePendingSessions{Updates: updates})
	if err != nil {
		s.logger.Warn("reasons of waiting sessions recorded only in part", "error", err)
	}
	for id, why := range res.Failed {
		s.logger.Log(ctx, s.levelFor(why), "cannot record why a session waits", "session_id", id, "error", why)
	}
	s.logger.Debug("sessions wait", "recorded", len(updates)-len(res.Failed))
	return res.Position
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
