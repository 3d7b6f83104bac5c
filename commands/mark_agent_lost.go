package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// MarkAgentLost declares an agent given up on (silent past the lost
// timeout, or an operator said so); see DisconnectAgent for a shorter
// silence. Reason defaults to agent-lost.
type MarkAgentLost struct {
	AgentID string
	Reason  string
}

func (MarkAgentLost) CommandName() string { return "agent.mark-lost" }

type markAgentLostHandler struct {
	sessions repository[*domain.Session]
	releaser
	clock
}

// newMarkAgentLostHandler builds the handler over what it uses.
func newMarkAgentLostHandler(sessions repository[*domain.Session], releaser releaser, now clock) markAgentLostHandler {
	return markAgentLostHandler{sessions: sessions, releaser: releaser, clock: now}
}

// errAllocatedMeanwhile: a session took an allocation on the agent while
// it was being marked lost; its session must be failed first.
var errAllocatedMeanwhile = domain.Errorf("agent.mark-lost", domain.KindConflict, "a session was allocated on the agent meanwhile")

// Handle puts every session holding an allocation on the agent in ERROR
// (domain.Session.Fail) and releases all their kernels' allocations, on
// this agent and on any other; then it marks the agent lost, releasing
// whatever is still allocated on it (domain.Agent.MarkLost). If a
// scheduler allocated on the agent meanwhile, the new session is failed
// too before the agent is marked (a bounded number of rounds).
//
// The order makes a crash harmless: the agent is marked lost last, so
// while any session is left to fail its allocation still names it, and
// running the command again finishes the job (failing an ended session and
// releasing nothing are no-ops). For the same reason, if any session could
// not be failed the agent is not marked lost and the error is returned for
// the caller to retry.
func (h markAgentLostHandler) Handle(ctx context.Context, md Metadata, cmd MarkAgentLost) (Result, error) {
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonAgentLost
	}
	at := h.now()
	stream := domain.AgentStream(cmd.AgentID)
	failed := map[uuid.UUID]bool{}
	var last uint64
	for round := 1; ; round++ {
		l, err := h.agents.load(ctx, stream)
		if err != nil {
			return Result{Position: last}, err
		}
		if !l.agg.Exists() {
			return Result{}, domain.Errorf("agent.mark-lost", domain.KindNotFound, "agent %q has not registered", cmd.AgentID)
		}
		pos, err := h.failSessions(ctx, md, l.agg.SessionIDs(), failed, reason, fmt.Sprintf("agent %s lost", cmd.AgentID), at)
		last = max(last, pos)
		if err != nil {
			return Result{Position: last}, err
		}
		_, pos, err = h.agents.update(ctx, stream, md, func(a *domain.Agent) ([]domain.Event, error) {
			for _, sid := range a.SessionIDs() {
				if !failed[sid] {
					return nil, errAllocatedMeanwhile
				}
			}
			return a.MarkLost(reason, at)
		})
		if errors.Is(err, errAllocatedMeanwhile) && round < h.sessions.retry.attempts {
			continue
		}
		if err != nil {
			return Result{Position: last}, err
		}
		return Result{Position: max(last, pos)}, nil
	}
}

// failSessions fails each session not yet in failed and releases its
// kernels' allocations, recording it in failed when both succeeded.
func (h markAgentLostHandler) failSessions(ctx context.Context, md Metadata, sessions []uuid.UUID, failed map[uuid.UUID]bool, reason, message string, at time.Time) (uint64, error) {
	var (
		last uint64
		errs []error
	)
	for _, sid := range sessions {
		if failed[sid] {
			continue
		}
		s, pos, err := h.sessions.update(ctx, domain.SessionStream(sid), md, func(s *domain.Session) ([]domain.Event, error) {
			if !s.Exists() {
				return nil, nil // an allocation without a session: MarkLost releases it
			}
			return s.Fail(reason, message, at)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		relPos, err := h.releaseEnded(ctx, md, s, at)
		last = max(last, pos, relPos)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		failed[sid] = true
	}
	return last, errors.Join(errs...)
}
