package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/domain"
)

// Handler handles one message. Returning nil acknowledges it: it is not
// delivered to this durable consumer again. Returning an error makes it
// retried: called again in this process after a backoff (Config.RetryMin
// doubling up to RetryMax) up to Config.Retries times, then handed back to
// JetStream, which redelivers it after the same backoff counted in
// deliveries; unless the error wraps ErrPermanent (see Permanent). ctx ends
// when Handle stops or after Config.AckWait, when JetStream redelivers the
// message anyway. A handler must be idempotent by message UUID (the event
// id): a message may be delivered more than once.
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
// except that a message still failing after its retries in this process
// is handed back and comes again after its backoff, behind later ones. The
// ack of a message is confirmed by JetStream before the next message is
// handed to h. On stop, Handle cancels the running h's ctx (which also
// ends a retry's wait) and waits up to Config.DrainTimeout for it to
// return (so h must honour ctx), acks or nacks its message as usual, then
// hands back (nacks) the messages already delivered to this process, so
// that they are redelivered at once rather than after AckWait.
//
// Each Handle uses its own connection to the server, and its own watermill
// message.Router (see newRouter).
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
	hand, err := b.subscribe(ctx, stream, topic, durable, log)
	if err != nil {
		return stoppedOr(ctx, err)
	}
	runCtx, stop := b.untilClosed(ctx)
	defer stop()
	router, err := b.newRouter(runCtx, durable, topic, hand, h, log)
	if err == nil {
		log.Info("handling messages")
		// Run fails only before it subscribed: nothing was handed out.
		err = router.Run(runCtx)
	}
	if err != nil {
		hand.cancelSub()
		hand.nc.Close()
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	<-hand.done
	log.Info("stopped handling messages")
	if runCtx.Err() != nil {
		return nil
	}
	return hand.err
}

// subscribe opens a connection of its own for durable and subscribes to
// topic through watermill-nats, bound to the consumer.
func (b *Bus) subscribe(ctx context.Context, stream, topic, durable string, log *slog.Logger) (*handOver, error) {
	const op = "bus.handle"
	closed := make(chan struct{})
	nc, err := connect(ctx, b.cfg, log, b.cfg.ClientName+"/"+durable,
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return nil, err
	}
	wmLog := b.wmLog.With(map[string]any{"durable": durable}) // watermill adds the topic
	sub, err := wmnats.NewSubscriberWithNatsConn(nc, b.subscriberConfig(stream, durable, log), wmLog)
	if err != nil {
		nc.Close()
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	// watermill-nats's context is not the Handle's: it is cancelled only
	// once the connection is drained (see handOver), so that watermill-nats
	// never drops a message unacknowledged while it unsubscribes.
	subCtx, cancelSub := context.WithCancel(context.Background())
	msgs, err := sub.Subscribe(subCtx, topic)
	if err != nil {
		cancelSub()
		nc.Close()
		return nil, unavailable(op, fmt.Errorf("subscribe to %s as %s: %w", topic, durable, err))
	}
	return &handOver{nc: nc, msgs: msgs, closed: closed, cancelSub: cancelSub, log: log, done: make(chan struct{})}, nil
}

// untilClosed is ctx, also cancelled when the Bus closes.
func (b *Bus) untilClosed(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-b.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// stoppedOr is nil when ctx has ended (a Handle stopped while it started
// returns nil, as one stopped later does), err otherwise.
func stoppedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
