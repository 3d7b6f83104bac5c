package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// RegisterAgent announces an agent: its id, architecture, capacity slots
// and devices. Agents send it at start and whenever what they have changes.
type RegisterAgent struct {
	Spec domain.AgentSpec
}

func (RegisterAgent) CommandName() string { return "agent.register" }

type registerAgentHandler struct {
	agents repository[*domain.Agent]
	clock
}

// newRegisterAgentHandler builds the handler over what it uses.
func newRegisterAgentHandler(agents repository[*domain.Agent], now clock) registerAgentHandler {
	return registerAgentHandler{agents: agents, clock: now}
}

// Handle records the announcement (domain.Agent.Register): the first
// creates the agent; the same announcement again appends nothing; a
// changed one updates capacity and devices; a lost agent rejoins; a
// disconnected agent reconnects (its sessions return as it reports their
// kernels, see domain.Session.ReportKernel).
// Allocations are kept across re-registration: a restarted agent rebuilds
// its containers from their labels and keeps what it runs.
func (h registerAgentHandler) Handle(ctx context.Context, md Metadata, cmd RegisterAgent) (Result, error) {
	at := h.now()
	_, pos, err := h.agents.update(ctx, domain.AgentStream(cmd.Spec.ID), md, func(a *domain.Agent) ([]domain.Event, error) {
		return a.Register(cmd.Spec, at)
	})
	return Result{Position: pos}, err
}
