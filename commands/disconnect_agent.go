package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/domain"
)

// DisconnectAgent declares an agent disconnected: silent past the
// heartbeat timeout, but not given up on. Reason defaults to
// agent-disconnected.
type DisconnectAgent struct {
	AgentID string
	Reason  string
}

func (DisconnectAgent) CommandName() string { return "agent.disconnect" }

type disconnectAgentHandler struct {
	sessions repository[*domain.Session]
	agents   repository[*domain.Agent]
	clock
}

// newDisconnectAgentHandler builds the handler over what it uses.
func newDisconnectAgentHandler(sessions repository[*domain.Session], agents repository[*domain.Agent], now clock) disconnectAgentHandler {
	return disconnectAgentHandler{sessions: sessions, agents: agents, clock: now}
}

// Handle marks every session holding an allocation on the agent
// DISCONNECTED (domain.Session.Disconnect), then the agent
// (domain.Agent.Disconnect), which stops new placements on it. Nothing is
// released and nothing is torn down: the kernels most likely still run.
//
// The agent is marked last so that a crash, or a session that could not be
// marked, leaves the agent alive for the liveness check to try again (the
// whole command is idempotent). A session placed on the agent between the
// two steps is not marked; it is ended like the others if the agent is
// given up on (MarkAgentLost).
func (h disconnectAgentHandler) Handle(ctx context.Context, md Metadata, cmd DisconnectAgent) (Result, error) {
	reason := cmd.Reason
	if reason == "" {
		reason = domain.ReasonAgentDisconnected
	}
	at := h.now()
	stream := domain.AgentStream(cmd.AgentID)
	l, err := h.agents.load(ctx, stream)
	if err != nil {
		return Result{}, err
	}
	if !l.agg.Exists() {
		return Result{}, domain.Errorf("agent.disconnect", domain.KindNotFound, "agent %q has not registered", cmd.AgentID)
	}
	var (
		last uint64
		errs []error
	)
	for _, sid := range l.agg.SessionIDs() {
		_, pos, err := h.sessions.update(ctx, domain.SessionStream(sid), md, func(s *domain.Session) ([]domain.Event, error) {
			if !s.Exists() {
				return nil, nil // an allocation without a session: nothing to mark
			}
			return s.Disconnect(cmd.AgentID, reason, at)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", sid, err))
			continue
		}
		last = max(last, pos)
	}
	if err := errors.Join(errs...); err != nil {
		return Result{Position: last}, err
	}
	_, pos, err := h.agents.update(ctx, stream, md, func(a *domain.Agent) ([]domain.Event, error) {
		return a.Disconnect(reason, at)
	})
	return Result{Position: max(last, pos)}, err
}
