package reports

import (
	"context"
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
)

// register records the agent and answers with the kernels the manager
// believes are allocated on it.
func (c *Consumer) register(ctx context.Context, md commands.Metadata, msg *message.Message, m protocol.AgentRegister) error {
	if _, err := c.handlers.RegisterAgent.Handle(ctx, md, commands.RegisterAgent{Spec: m.Spec()}); err != nil {
		return c.failure(err, "register refused", "agent_id", m.AgentID)
	}
	agent, err := c.loadAgent(ctx, m.AgentID)
	if err != nil {
		return err
	}
	sync := protocol.KernelSync{AgentID: m.AgentID, Kernels: []uuid.UUID{}, AsOfRevision: agent.Revision(), At: c.cfg.Clock().UTC()}
	for _, al := range agent.Allocations() {
		sync.Kernels = append(sync.Kernels, al.KernelID)
	}
	base, err := uuid.Parse(msg.UUID)
	if err != nil {
		return bus.Permanent(err)
	}
	out, err := protocol.Encode(protocol.DerivedID(base, protocol.TypeKernelSync), sync)
	if err != nil {
		return bus.Permanent(err)
	}
	// Sealed as every message to an agent is (see commands/forwarder).
	if err := protocol.Seal(out, agent.SealKey()); err != nil {
		return bus.Permanent(err)
	}
	topic, err := bus.AgentTopic(m.AgentID)
	if err != nil {
		return bus.Permanent(err)
	}
	// The agent may only bind to its consumer; the manager makes it.
	if err := c.bus.EnsureAgentConsumer(ctx, m.AgentID); err != nil {
		return err
	}
	if err := c.bus.Publish(ctx, topic, out); err != nil {
		return err
	}
	c.logger.Info("agent registered", "agent_id", m.AgentID, "kernels", len(sync.Kernels), "as_of_revision", sync.AsOfRevision)
	return nil
}

// loadAgent folds the agent's stream.
func (c *Consumer) loadAgent(ctx context.Context, id string) (*domain.Agent, error) {
	recs, err := c.log.ReadStream(ctx, domain.AgentStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		return nil, err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return nil, err
	}
	return domain.RehydrateAgent(events)
}
