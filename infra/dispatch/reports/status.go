package reports

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
)

// status folds a kernel report into its session.
func (c *Consumer) status(ctx context.Context, md commands.Metadata, m protocol.KernelStatus) error {
	_, err := c.handlers.ReportKernelStatus.Handle(ctx, md, commands.ReportKernelStatus{
		SessionID: m.SessionID, KernelID: m.KernelID, AgentID: m.AgentID, Phase: m.Phase,
		ContainerID: m.ContainerID, ExitCode: m.ExitCode, Reason: m.Reason, Message: m.Message,
		ServicePorts: m.ServicePorts, Pull: m.Pull, ReadyApps: m.ReadyApps,
	})
	if err == nil {
		return nil
	}
	if domain.KindOf(err) == domain.KindConflict {
		if pending, perr := c.sessionPending(ctx, m); perr != nil || pending {
			// Early: the session is not marked scheduled yet. Try again.
			return errors.Join(err, perr)
		}
	}
	return c.failure(err, "report refused", "agent_id", m.AgentID, "session_id", m.SessionID, "kernel_id", m.KernelID, "phase", m.Phase)
}

// sessionPending reports whether the report's session is still PENDING.
func (c *Consumer) sessionPending(ctx context.Context, m protocol.KernelStatus) (bool, error) {
	recs, err := c.log.ReadStream(ctx, domain.SessionStream(m.SessionID).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		return false, err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return false, err
	}
	s, err := domain.RehydrateSession(events)
	if err != nil {
		return false, err
	}
	return s.Status() == domain.StatusPending, nil
}

// failure turns a command error into the handler's answer: an error the
// domain will give again (invalid, unknown, a conflict of states) drops the
// message; anything else is retried, including a conflict that only means
// the command's retries against concurrent writers ran out.
func (c *Consumer) failure(err error, what string, attrs ...any) error {
	if errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		return err
	}
	switch domain.KindOf(err) {
	case domain.KindInvalid, domain.KindNotFound, domain.KindConflict:
		c.logger.Warn(what+"; message dropped", append(attrs, "error", err)...)
		return bus.Permanent(err)
	}
	return err
}
