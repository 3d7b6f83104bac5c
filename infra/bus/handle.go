package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnhq/cairn/domain"
)

// Handler handles one message. Returning nil acknowledges it: it is not
// delivered to this durable consumer again. Returning an error makes it
// redelivered after a backoff (Config.RetryMin doubling up to RetryMax),
// unless the error wraps ErrPermanent (see Permanent). ctx ends when Handle
// stops or after Config.AckWait, when JetStream redelivers the message
// anyway. A handler must be idempotent by message UUID (the event id): a
// message may be delivered more than once.
type Handler func(ctx context.Context, msg *message.Message) error

// ErrPermanent marks a handler error that retrying cannot fix (a message
// that does not decode, an event of an unknown version): the message is
// logged and acknowledged instead of redelivered. Wrap with Permanent.
var ErrPermanent = errors.New("bus: permanent failure")

// Permanent wraps err so that errors.Is(err, ErrPermanent) holds; the
// message is then dropped, not redelivered. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (e permanentError) Error() string        { return "permanent: " + e.err.Error() }
func (e permanentError) Unwrap() error        { return e.err }
func (e permanentError) Is(target error) bool { return target == ErrPermanent }

// Handle runs h on the messages of topic, as the durable consumer durable,
// until ctx ends or the Bus is closed; it then returns nil. It returns an
// error at once when it cannot start: a bad topic or durable name or a nil
// h (domain.ErrInvalid), a durable that already consumes another topic
// (domain.ErrConflict), a server that cannot be reached
// (domain.ErrUnavailable); and domain.ErrUnavailable if its connection is
// closed for good while it runs.
//
// The consumer is created on first use and kept by the server: a Handle
// started later with the same durable name, in this process or another,
// resumes with the first message the consumer has not acknowledged, and
// gets everything published meanwhile. Several Handles with the same
// durable (replicas of a server) share its messages, each message going to
// one of them. A new durable starts with the oldest message its stream
// still keeps.
//
// Messages are handled one at a time, in the order they were published,
// except that a message whose handler failed comes back after its backoff,
// behind later ones. The ack of a message is confirmed by JetStream before
// the next message is handed to h. On stop, Handle cancels the running h's
// ctx and waits for it to return (so h must honour ctx: Close waits too),
// acks or nacks its message as usual, then hands back (nacks) the messages
// already delivered to this process, so that they are redelivered at once
// rather than after AckWait; this takes at most Config.DrainTimeout.
//
// Each Handle uses its own connection to the server.
func (b *Bus) Handle(ctx context.Context, topic, durable string, h Handler) error {
	const op = "bus.handle"
	stream, err := streamFor(topic)
	if err != nil {
		return err
	}
	if err := ValidateID("durable", durable); err != nil {
		return err
	}
	if h == nil {
		return domain.Invalid(op, "handler", "must not be nil")
	}
	if !b.acquire() {
		return ErrClosed
	}
	defer b.active.Done()
	log := b.log.With("topic", topic, "durable", durable)

	if b.cfg.AgentID != "" {
		if own, _ := AgentTopic(b.cfg.AgentID); topic != own || durable != AgentDurable(b.cfg.AgentID) {
			return domain.Errorf(op, domain.KindForbidden, "agent %s consumes only its own topic %s as %s", b.cfg.AgentID, own, AgentDurable(b.cfg.AgentID))
		}
		if err := b.awaitConsumer(ctx, stream, topic, durable, log); err != nil {
			return stoppedOr(ctx, err)
		}
	} else if err := b.ensureConsumer(ctx, stream, topic, durable); err != nil {
		return stoppedOr(ctx, err)
	}
	closed := make(chan struct{})
	nc, err := connect(ctx, b.cfg, log, b.cfg.ClientName+"/"+durable,
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return stoppedOr(ctx, err)
	}
	wmLog := b.wmLog.With(map[string]any{"durable": durable}) // watermill adds the topic
	sub, err := wmnats.NewSubscriberWithNatsConn(nc, b.subscriberConfig(stream, durable, log), wmLog)
	if err != nil {
		nc.Close()
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	// watermill's context is not ctx: it is cancelled only once the
	// connection is drained (see drain), so that watermill never hands a
	// message out while it unsubscribes.
	subCtx, cancelSub := context.WithCancel(context.Background())
	msgs, err := sub.Subscribe(subCtx, topic)
	if err != nil {
		cancelSub()
		nc.Close()
		return unavailable(op, fmt.Errorf("subscribe to %s as %s: %w", topic, durable, err))
	}
	log.Info("handling messages")

	runErr := b.consume(ctx, msgs, closed, h, log)
	b.drain(nc, msgs, closed, log)
	cancelSub()
	for range msgs {
		// watermill closes msgs once it has let go of the subscription.
	}
	log.Info("stopped handling messages")
	return runErr
}

// stoppedOr is nil when ctx has ended (a Handle stopped while it started
// returns nil, as one stopped later does), err otherwise.
func stoppedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// consume hands messages to h until ctx ends, the Bus closes or the
// connection is closed for good.
func (b *Bus) consume(ctx context.Context, msgs <-chan *message.Message, closed <-chan struct{}, h Handler, log *slog.Logger) error {
	for {
		// Stopping wins over a message that is ready at the same time.
		select {
		case <-ctx.Done():
			return nil
		case <-b.closing:
			return nil
		default:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-b.closing:
			return nil
		case <-closed:
			return unavailable("bus.handle", errors.New("connection closed"))
		case m, ok := <-msgs:
			if !ok {
				return unavailable("bus.handle", errors.New("subscription ended"))
			}
			b.dispatch(ctx, m, h, log)
		}
	}
}

// dispatch runs h on m and acks or nacks m by the result.
func (b *Bus) dispatch(ctx context.Context, m *message.Message, h Handler, log *slog.Logger) {
	hctx, cancel := context.WithTimeout(ctx, b.cfg.AckWait)
	defer cancel()
	m.SetContext(hctx)
	attempt := Attempt(m)
	log = log.With("message_uuid", m.UUID, "type", m.Metadata.Get(MetaType), "attempt", attempt)

	err := callHandler(hctx, m, h)
	switch {
	case err == nil:
		m.Ack()
		log.Debug("message handled")
	case errors.Is(err, ErrPermanent):
		m.Ack()
		log.Error("message dropped: the handler failed permanently", "error", err)
	case b.cfg.MaxDeliveries > 0 && attempt >= b.cfg.MaxDeliveries:
		m.Nack()
		log.Error("message dropped: the handler failed on the last attempt", "error", err, "max_deliveries", b.cfg.MaxDeliveries)
	default:
		m.Nack()
		log.Warn("handler failed; the message will be redelivered", "error", err, "retry_in", b.backoff().WaitTime(uint64(max(attempt, 1))))
	}
}

// callHandler turns a panic of h into an error, so that one bad message
// does not take the process down; the message is then retried.
func callHandler(ctx context.Context, m *message.Message, h Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return h(ctx, m)
}

// drain stops delivery to this connection and waits until it is closed.
// Messages watermill hands out meanwhile (delivered before the server
// processed the unsubscribe) are nacked, to be redelivered without waiting
// for AckWait. The ack of the message handled last is sent before the
// connection closes.
func (b *Bus) drain(nc *nats.Conn, msgs <-chan *message.Message, closed <-chan struct{}, log *slog.Logger) {
	if err := nc.Drain(); err != nil {
		log.Warn("drain failed; closing", "error", err)
		nc.Close()
	}
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			m.Nack()
		case <-closed:
			return
		}
	}
}

// EnsureAgentConsumer creates (or updates) the consumer agentID consumes
// its topic with (AgentDurable), for an agent connected with
// Config.AgentID, which may not create it itself. The manager calls it
// when the agent registers; messages published to the agent's topic
// before are kept by the stream and delivered.
func (b *Bus) EnsureAgentConsumer(ctx context.Context, agentID string) error {
	topic, err := AgentTopic(agentID)
	if err != nil {
		return err
	}
	if b.cfg.AgentID != "" {
		return domain.Errorf("bus.ensure-agent-consumer", domain.KindForbidden, "an agent's connection cannot create consumers")
	}
	if !b.acquire() {
		return ErrClosed
	}
	defer b.active.Done()
	return b.ensureConsumer(ctx, AgentsStream, topic, AgentDurable(agentID))
}

// awaitConsumer waits until durable exists and consumes topic: an agent
// binds to the consumer the manager made for it (EnsureAgentConsumer,
// when the agent registers).
func (b *Bus) awaitConsumer(ctx context.Context, stream, topic, durable string, log *slog.Logger) error {
	const op = "bus.handle"
	bo := b.backoff()
	for attempt := uint64(1); ; attempt++ {
		existing, err := b.js.PushConsumer(ctx, stream, durable)
		switch {
		case err == nil:
			if f := existing.CachedInfo().Config.FilterSubject; f != topic {
				return domain.Errorf(op, domain.KindConflict, "durable %q consumes %q from stream %s, not %q", durable, f, stream, topic)
			}
			return nil
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			if attempt == 1 {
				log.Info("waiting for the manager to create this agent's consumer (it does when the agent registers)")
			}
		case errors.Is(err, jetstream.ErrNotPushConsumer):
			return domain.Errorf(op, domain.KindConflict, "durable %q exists in stream %s as a pull consumer", durable, stream)
		default:
			log.Warn("cannot look up this agent's consumer; retrying", "error", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.closing:
			return ErrClosed
		case <-time.After(bo.WaitTime(attempt)):
		}
	}
}

// ensureConsumer creates the durable push consumer of topic, or updates its
// settings; it refuses a durable that consumes another topic.
func (b *Bus) ensureConsumer(ctx context.Context, stream, topic, durable string) error {
	const op = "bus.handle"
	existing, err := b.js.PushConsumer(ctx, stream, durable)
	switch {
	case err == nil:
		if f := existing.CachedInfo().Config.FilterSubject; f != topic {
			return domain.Errorf(op, domain.KindConflict, "durable %q already consumes %q from stream %s, not %q", durable, f, stream, topic)
		}
	case errors.Is(err, jetstream.ErrConsumerNotFound):
	case errors.Is(err, jetstream.ErrNotPushConsumer):
		return domain.Errorf(op, domain.KindConflict, "durable %q exists in stream %s as a pull consumer", durable, stream)
	default:
		return unavailable(op, fmt.Errorf("look up consumer %s of stream %s: %w", durable, stream, err))
	}
	maxDeliver := b.cfg.MaxDeliveries
	if maxDeliver == 0 {
		maxDeliver = -1
	}
	_, err = b.js.CreateOrUpdatePushConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:        durable,
		Description:    "Cairn: " + topic,
		FilterSubject:  topic,
		DeliverSubject: deliverSubject(stream, durable),
		// A deliver group lets replicas share the consumer, and lets a
		// restarted process bind while the server still counts the old
		// connection.
		DeliverGroup:  durable,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       b.cfg.AckWait,
		MaxDeliver:    maxDeliver,
		MaxAckPending: b.cfg.MaxInFlight,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	})
	if err != nil {
		if existing != nil {
			// As for streams (setup): a full disk refuses the update,
			// the consumer as it is still delivers.
			b.log.Warn("cannot update the consumer's settings; using it as it is", "stream", stream, "durable", durable, "error", err)
			return nil
		}
		return unavailable(op, fmt.Errorf("create or update consumer %s of stream %s: %w", durable, stream, err))
	}
	return nil
}

// subscriberConfig binds a watermill subscriber to the consumer that
// ensureConsumer made: Bind, so that unsubscribing never deletes it.
func (b *Bus) subscriberConfig(stream, durable string, log *slog.Logger) wmnats.SubscriberSubscriptionConfig {
	return wmnats.SubscriberSubscriptionConfig{
		Unmarshaler:      unmarshaler{log: log},
		SubscribersCount: 1,
		// dispatch ends the handler's context after AckWait; watermill
		// waits longer, so the ack or nack that follows is never lost.
		AckWaitTimeout:    2 * b.cfg.AckWait,
		CloseTimeout:      b.cfg.DrainTimeout,
		SubscribeTimeout:  b.cfg.ConnectTimeout,
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		// The default subject calculator makes this the queue group: the
		// consumer's deliver group.
		QueueGroupPrefix: durable,
		NakDelay:         b.backoff(),
		JetStream: wmnats.JetStreamConfig{
			SubscribeOptions: []nats.SubOpt{nats.Bind(stream, durable), nats.ManualAck()},
			// Same name as Bind: otherwise watermill adds BindStream("").
			DurableCalculator: func(string, string) string { return durable },
			// Wait for the server to confirm each ack.
			AckAsync: false,
		},
	}
}

func (b *Bus) backoff() backoff { return backoff{min: b.cfg.RetryMin, max: b.cfg.RetryMax} }

// backoff is the delay before a nacked message is redelivered: min after
// the first delivery failed, doubling with each attempt, at most max.
type backoff struct{ min, max time.Duration }

var _ wmnats.Delay = backoff{}

// WaitTime implements watermill-nats's Delay; attempt is the number of
// deliveries so far (1 after the first).
func (b backoff) WaitTime(attempt uint64) time.Duration {
	d := b.min
	for i := uint64(1); i < attempt && d < b.max; i++ {
		if d > b.max/2 {
			return b.max
		}
		d *= 2
	}
	return min(d, b.max)
}

// unmarshaler reads a NATS message as watermill's NATSMarshaler does and
// adds MetaAttempt from the JetStream delivery count and MetaSubject from
// the subject (whatever the sender put in those headers is replaced).
type unmarshaler struct{ log *slog.Logger }

func (u unmarshaler) Unmarshal(nm *nats.Msg) (*message.Message, error) {
	m, err := (&wmnats.NATSMarshaler{}).Unmarshal(nm)
	if err != nil {
		// It would fail the same way on every redelivery.
		u.log.Error("message dropped: cannot read it", "subject", nm.Subject, "error", err)
		if termErr := nm.Term(); termErr != nil {
			u.log.Error("cannot terminate an unreadable message", "error", termErr)
		}
		return nil, err
	}
	delete(m.Metadata, MetaAttempt)
	m.Metadata.Set(MetaSubject, nm.Subject)
	if md, err := nm.Metadata(); err == nil {
		m.Metadata.Set(MetaAttempt, strconv.FormatUint(md.NumDelivered, 10))
	}
	return m, nil
}
