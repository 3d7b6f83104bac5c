package reports

import (
	"context"
	"errors"
	"net/http"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// ActivityAction is the audit action of a kernel's use, followed by the
// signal: "kernel.activity terminal".
const ActivityAction = "kernel.activity"

// activity records a kernel.activity as one audit record per signal about
// the session, through the access log's Writer (batched with the API's
// reads, so an agent's report costs no append of its own). The
// session-limits manager counts such records as use, as it counts the app
// proxy's app.traffic: it needs no rule of its own for agents' signals.
//
// The report counts only when the session runs the kernel on the agent
// that sent it (an agent cannot keep another's sessions alive); it is
// dropped otherwise. A redelivered report writes the same records again
// (same request ids, derived from the message id): harmless, the limits
// take the latest use.
func (c *Consumer) activity(ctx context.Context, msg *message.Message, m protocol.KernelActivity) error {
	if c.cfg.Record == nil {
		return nil
	}
	ok, err := c.runsOn(ctx, m.SessionID, m.KernelID, m.AgentID)
	if err != nil {
		return err
	}
	if !ok {
		c.logger.Info("kernel activity dropped: the session does not run that kernel on that agent",
			"agent_id", m.AgentID, "session_id", m.SessionID, "kernel_id", m.KernelID)
		return nil
	}
	id, _ := uuid.Parse(msg.UUID) // Decode checked it
	now := c.cfg.Clock().UTC()
	for _, signal := range m.Signals {
		rec := audit.Record{Time: now, UserID: "agent:" + m.AgentID, Action: ActivityAction + " " + signal,
			EntityType: "session", EntityID: m.SessionID.String(), Outcome: audit.Success, Status: http.StatusOK,
			RequestID: protocol.DerivedID(id, signal).String()}
		if err := c.cfg.Record(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// runsOn reports whether the session is running (or disconnected) with
// the kernel placed on the agent.
func (c *Consumer) runsOn(ctx context.Context, session, kernel uuid.UUID, agent string) (bool, error) {
	recs, err := c.log.ReadStream(ctx, domain.SessionStream(session).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		if errors.Is(err, eventstore.ErrStreamNotFound) {
			return false, nil
		}
		return false, err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return false, err
	}
	s, err := domain.RehydrateSession(events)
	if err != nil || (s.Status() != domain.StatusRunning && s.Status() != domain.StatusDisconnected) {
		return false, nil
	}
	for _, k := range s.Kernels() {
		if k.ID() == kernel && k.AgentID() == agent {
			return true, nil
		}
	}
	return false, nil
}
