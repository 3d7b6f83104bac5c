package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnhq/cairn/domain"
)

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
// when the agent registers). It looks again after RetryMin, doubling up to
// RetryMax, until ctx ends or the Bus closes.
func (b *Bus) awaitConsumer(ctx context.Context, stream, topic, durable string, log *slog.Logger) error {
	const op = "bus.handle"
	ctx, stop := b.untilClosed(ctx)
	defer stop()
	attempt := 0
	lookUp := func() error {
		attempt++
		existing, err := b.js.PushConsumer(ctx, stream, durable)
		switch {
		case err == nil:
			if f := existing.CachedInfo().Config.FilterSubject; f != topic {
				return backoff.Permanent(domain.Errorf(op, domain.KindConflict, "durable %q consumes %q from stream %s, not %q", durable, f, stream, topic))
			}
			return nil
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			if attempt == 1 {
				log.Info("waiting for the manager to create this agent's consumer (it does when the agent registers)")
			}
		case errors.Is(err, jetstream.ErrNotPushConsumer):
			return backoff.Permanent(domain.Errorf(op, domain.KindConflict, "durable %q exists in stream %s as a pull consumer", durable, stream))
		default:
			log.Warn("cannot look up this agent's consumer; retrying", "error", err)
		}
		return err
	}
	err := backoff.Retry(lookUp, backoff.WithContext(b.exponential(), ctx))
	if err != nil && ctx.Err() != nil {
		select {
		case <-b.closing:
			return ErrClosed
		default:
		}
	}
	return err
}

// exponential is the Bus's backoff between tries: RetryMin, doubling up to
// RetryMax, without jitter and without end.
func (b *Bus) exponential() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(b.cfg.RetryMin),
		backoff.WithMaxInterval(b.cfg.RetryMax),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
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
		// settle ends the handler's context after AckWait; watermill
		// waits longer, so the ack or nack that follows is never lost.
		AckWaitTimeout:    2 * b.cfg.AckWait,
		CloseTimeout:      b.cfg.DrainTimeout,
		SubscribeTimeout:  b.cfg.ConnectTimeout,
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		// The default subject calculator makes this the queue group: the
		// consumer's deliver group.
		QueueGroupPrefix: durable,
		NakDelay:         b.nakDelay(),
		JetStream: wmnats.JetStreamConfig{
			SubscribeOptions: []nats.SubOpt{nats.Bind(stream, durable), nats.ManualAck()},
			// Same name as Bind: otherwise watermill adds BindStream("").
			DurableCalculator: func(string, string) string { return durable },
			// Wait for the server to confirm each ack.
			AckAsync: false,
		},
	}
}

func (b *Bus) nakDelay() nakDelay { return nakDelay{min: b.cfg.RetryMin, max: b.cfg.RetryMax} }

// nakDelay is how long JetStream waits before it redelivers a nacked
// message: min after the first delivery failed, doubling with each
// delivery, at most max. It is the schedule of the Bus's backoff
// (exponential) as a function of the delivery count, which is what
// watermill-nats asks for.
type nakDelay struct{ min, max time.Duration }

var _ wmnats.Delay = nakDelay{}

// WaitTime implements watermill-nats's Delay; attempt is the number of
// deliveries so far (1 after the first).
func (d nakDelay) WaitTime(attempt uint64) time.Duration {
	w := d.min
	for i := uint64(1); i < attempt && w < d.max; i++ {
		if w > d.max/2 {
			return d.max
		}
		w *= 2
	}
	return min(w, d.max)
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
