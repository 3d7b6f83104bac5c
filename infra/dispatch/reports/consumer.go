package reports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
)

// Bus is the part of the message bus the consumer uses; *bus.Bus
// satisfies it.
type Bus interface {
	Handle(ctx context.Context, topic, durable string, h bus.Handler) error
	Publish(ctx context.Context, topic string, msgs ...*message.Message) error
	EnsureAgentConsumer(ctx context.Context, agentID string) error
}

var _ Bus = (*bus.Bus)(nil)

// Log is what the consumer reads from the event store: the global log
// (agents' registrations and losses) and single streams. Every
// eventstore.Store satisfies it.
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

var _ Log = eventstore.Store(nil)

// Consumer turns agents' reports into commands and declares silent agents
// lost. Build it with New, run it with Run.
type Consumer struct {
	cfg      Config
	bus      Bus
	log      Log
	handlers *commands.Handlers
	logger   *slog.Logger
	live     *liveness
	metrics  metrics
}

// New checks cfg and builds a consumer of b's reports topic that sends
// commands through handlers and reads the store's log.
func New(cfg Config, b Bus, log Log, handlers *commands.Handlers) (*Consumer, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if b == nil {
		errs = append(errs, errors.New("no bus"))
	}
	if log == nil {
		errs = append(errs, errors.New("no event log"))
	}
	if handlers == nil {
		errs = append(errs, errors.New("no command handlers"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("reports: %w", errors.Join(errs...))
	}
	cfg = cfg.WithDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	return &Consumer{
		cfg: cfg, bus: b, log: log, handlers: handlers,
		logger:  cfg.Logger.With("component", "reports"),
		live:    newLiveness(cfg.Clock),
		metrics: m,
	}, nil
}

// Run consumes the reports topic and checks liveness until ctx ends (it
// returns nil then). It returns an error when either cannot start or
// stops on its own (the bus closed, the log failed).
func (c *Consumer) Run(ctx context.Context) error {
	c.logger.Info("reports consumer starting", "config", c.cfg)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- c.runLiveness(runCtx) }()
	go func() { errc <- c.bus.Handle(runCtx, bus.ReportsTopic, c.cfg.Durable, c.handle) }()
	first := <-errc
	cancel()
	second := <-errc
	if ctx.Err() != nil {
		c.logger.Info("reports consumer stopped")
		return nil
	}
	if err := errors.Join(first, second); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return errors.New("reports: stopped: the bus was closed")
}

// handle dispatches one report. Its error decides redelivery (see the
// package documentation).
func (c *Consumer) handle(ctx context.Context, msg *message.Message) error {
	m, err := protocol.Decode(msg)
	if err != nil {
		return bus.Permanent(err)
	}
	// The bus lets only an agent's own credentials publish on its reports
	// topic: a report speaking for another agent is forged.
	if sender, ok := bus.ReportSender(msg); !ok || sender != m.Agent() {
		c.logger.Warn("report dropped: it speaks for another agent than the one that sent it",
			"sender", sender, "claims", m.Agent(), "type", m.MessageType(), "message_uuid", msg.UUID)
		return bus.Permanent(fmt.Errorf("reports: a %s from agent %q claims to be from %q", m.MessageType(), sender, m.Agent()))
	}
	c.live.heard(m.Agent())
	md := commands.Metadata{Actor: "agent:" + m.Agent(), CausationID: msg.UUID}
	switch m := m.(type) {
	case protocol.AgentRegister:
		return c.register(ctx, md, msg, m)
	case protocol.AgentHeartbeat:
		return c.heartbeat(ctx, md, m)
	case protocol.KernelStatus:
		return c.status(ctx, md, m)
	case protocol.KernelActivity:
		return c.activity(ctx, msg, m)
	}
	return bus.Permanent(fmt.Errorf("reports: %s is not a report", m.MessageType()))
}
