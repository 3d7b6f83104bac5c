package forwarder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/cenkalti/backoff/v4"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
)

// Log is what the forwarder reads from the event store: the global log
// from its checkpoint, and session streams to build the messages. Every
// eventstore.Store satisfies it.
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

var _ Log = eventstore.Store(nil)

// Publisher is the part of the bus the forwarder uses; *bus.Bus satisfies
// it.
type Publisher interface {
	Publish(ctx context.Context, topic string, msgs ...*message.Message) error
}

var _ Publisher = (*bus.Bus)(nil)

// saveTimeout bounds the checkpoint save at shutdown, which runs after the
// caller's context has ended.
const saveTimeout = 5 * time.Second

// Forwarder publishes what agents must act on. Build it with New, run it
// with Run; one runs per cluster at a time (with the scheduler, on the
// leader).
type Forwarder struct {
	cfg    Config
	log    Log
	pub    Publisher
	cp     Checkpoint
	logger *slog.Logger
	// agents caches what the forwarder needs of each agent (the key its
	// messages are sealed to, its architecture), read from its stream; an
	// agent.registered in the log drops its entry. Only the forwarding
	// goroutine uses it.
	agents map[string]agentFacts
}

// New checks cfg and builds a forwarder from the store's log to the bus,
// keeping its position in cp.
func New(cfg Config, log Log, pub Publisher, cp Checkpoint) (*Forwarder, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if log == nil {
		errs = append(errs, errors.New("no event log"))
	}
	if pub == nil {
		errs = append(errs, errors.New("no publisher"))
	}
	if cp == nil {
		errs = append(errs, errors.New("no checkpoint"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("forwarder: %w", errors.Join(errs...))
	}
	cfg = cfg.WithDefaults()
	return &Forwarder{cfg: cfg, log: log, pub: pub, cp: cp, logger: cfg.Logger.With("component", "forwarder")}, nil
}

// Run forwards from the checkpoint until ctx ends (it returns nil then,
// after saving the checkpoint). It returns an error when the checkpoint
// cannot be loaded or the log cannot be followed.
func (f *Forwarder) Run(ctx context.Context) error {
	pos, err := f.cp.Load(ctx)
	if err != nil {
		return err
	}
	f.logger.Info("forwarder starting", "from", pos, "config", f.cfg)
	sub, err := f.log.Subscribe(ctx, pos)
	if err != nil {
		return stopped(ctx, fmt.Errorf("forwarder: subscribe: %w", err))
	}
	defer sub.Close()

	saved, unsaved := pos, 0
	save := func(ctx context.Context) {
		if pos == saved {
			return
		}
		if err := f.cp.Save(ctx, pos); err != nil {
			f.logger.Warn("cannot save the checkpoint; a restart republishes more", "position", pos, "error", err)
			return
		}
		saved, unsaved = pos, 0
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		defer cancel()
		save(sctx)
		f.logger.Info("forwarder stopped", "position", saved)
	}()

	// due fires SaveDelay after the first event left unsaved.
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-due:
			due = nil
			save(ctx)
		case msg, ok := <-sub.Messages():
			if !ok {
				return stopped(ctx, fmt.Errorf("forwarder: subscription ended: %w", sub.Err()))
			}
			if msg.CaughtUp {
				continue
			}
			if err := f.forward(ctx, msg.Event); err != nil {
				return nil // only a stop interrupts forwarding
			}
			pos = msg.Event.Position
			if unsaved++; unsaved >= f.cfg.SaveEvery {
				due = nil
				save(ctx)
			} else if due == nil {
				due = time.After(f.cfg.SaveDelay)
			}
		}
	}
}

// forward publishes the event's messages, retrying what may succeed later
// until it does; it fails only when ctx ends.
func (f *Forwarder) forward(ctx context.Context, rec eventstore.RecordedEvent) error {
	var out []outgoing
	err := f.retry(ctx, func() error {
		var err error
		out, err = f.translate(ctx, rec)
		if err != nil && domain.KindOf(err) != domain.KindUnavailable {
			f.logger.Error("event skipped: it cannot be forwarded", "stream", rec.Stream, "revision", rec.Revision,
				"type", rec.Type, "event_id", rec.ID, "error", err)
			out = nil
			return nil
		}
		return err
	}, "read", rec)
	if err != nil {
		return err
	}
	for _, o := range out {
		if err := f.retry(ctx, func() error { return f.pub.Publish(ctx, o.topic, o.msg) }, "publish", rec); err != nil {
			return err
		}
		f.logger.Debug("forwarded", "type", rec.Type, "topic", o.topic, "message_id", o.msg.UUID, "position", rec.Position)
	}
	return nil
}

// retry runs fn until it succeeds, waiting RetryMin, then doubling up to
// RetryMax between attempts (no jitter); it gives up only when ctx ends.
func (f *Forwarder) retry(ctx context.Context, fn func() error, what string, rec eventstore.RecordedEvent) error {
	attempt := 0
	try := func() error {
		attempt++
		return fn()
	}
	notify := func(err error, wait time.Duration) {
		f.logger.Warn("forwarding failed, retrying", "what", what, "attempt", attempt, "in", wait,
			"type", rec.Type, "position", rec.Position, "error", err)
	}
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(f.cfg.RetryMin),
		backoff.WithMaxInterval(f.cfg.RetryMax),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
	return backoff.RetryNotify(try, backoff.WithContext(b, ctx), notify)
}

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
