package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// ReconnectAgent records that a disconnected agent was heard from again
// (a heartbeat), with the kernels it reports running.
type ReconnectAgent struct {
	AgentID string
	// Running are the kernels whose containers the agent reports running.
	Running []uuid.UUID
}

func (ReconnectAgent) CommandName() string { return "agent.reconnect" }

type reconnectAgentHandler struct {
	sessions repository[*domain.Session]
	agents   repository[*domain.Agent]
	clock
}

// newReconnectAgentHandler builds the handler over what it uses.
func newReconnectAgentHandler(sessions repository[*domain.Session], agents repository[*domain.Agent], now clock) reconnectAgentHandler {
	return reconnectAgentHandler{sessions: sessions, agents: agents, clock: now}
}

// Handle marks the agent alive again (domain.Agent.Reconnect: a lost agent
// is refused, it must register), then returns each of its DISCONNECTED
// sessions whose kernel it reports running to its phase
// (domain.Session.Reconnect, reason agent-reconnected). Sessions whose
// kernel is not in Running stay DISCONNECTED until the agent reports that
// kernel (an exit ends it as usual). Repeating the command is harmless.
func (h reconnectAgentHandler) Handle(ctx context.Context, md Metadata, cmd ReconnectAgent) (Result, error) {
	at := h.now()
	a, last, err := h.agents.update(ctx, domain.AgentStream(cmd.AgentID), md, func(a *domain.Agent) ([]domain.Event, error) {
		return a.Reconnect(at)
	})
	if err != nil {
		return Result{}, err
	}
	var errs []error
	for _, sid := range a.SessionIDs() {
		_, pos, err := h.sessions.update(ctx, domain.SessionStream(sid), md, func(s *domain.Session) ([]domain.Event, error) {
			if !s.Exists() {
				return nil, nil
			}
			return s.Reconnect(cmd.AgentID, cmd.Running, at)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", sid, err))
			continue
		}
		last = max(last, pos)
	}
	return Result{Position: last}, errors.Join(errs...)
}
