package bus

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
)

// newRouter is the watermill Router of one Handle: h on topic, read from
// hand, behind these middlewares, outermost first:
//
//   - settle: gives h a context that ends with runCtx or after AckWait,
//     and logs the outcome; an error it returns makes the Router nack
//     (JetStream redelivers after the nak delay, see nakDelay);
//   - middleware.Retry: calls h again after RetryMin doubling up to
//     RetryMax, at most Config.Retries times, while the context lasts;
//   - dropPermanent: an error wrapping ErrPermanent is logged and the
//     message acked, never retried;
//   - middleware.Recoverer: a panic becomes an error (with its stack),
//     retried like any other; the process lives.
func (b *Bus) newRouter(runCtx context.Context, name, topic string, hand *handOver, h Handler, log *slog.Logger) (*message.Router, error) {
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: b.cfg.DrainTimeout}, b.wmLog)
	if err != nil {
		return nil, err
	}
	router.AddMiddleware(b.settle(runCtx, log), b.retry(log), dropPermanent(log), middleware.Recoverer)
	router.AddConsumerHandler(name, topic, hand, func(m *message.Message) error {
		return h(m.Context(), m)
	})
	return router, nil
}

// messageLog is log with the attributes of m.
func messageLog(log *slog.Logger, m *message.Message) *slog.Logger {
	return log.With("message_uuid", m.UUID, "type", m.Metadata.Get(MetaType), "attempt", Attempt(m))
}

// settle runs the rest of the chain with the handler's context and logs
// what becomes of the message.
func (b *Bus) settle(runCtx context.Context, log *slog.Logger) message.HandlerMiddleware {
	return func(next message.HandlerFunc) message.HandlerFunc {
		return func(m *message.Message) ([]*message.Message, error) {
			ctx, cancel := context.WithTimeout(runCtx, b.cfg.AckWait)
			defer cancel()
			m.SetContext(ctx)
			attempt := Attempt(m)
			log := messageLog(log, m)
			out, err := next(m)
			switch {
			case err == nil:
				log.Debug("message handled")
				return out, nil
			case b.cfg.MaxDeliveries > 0 && attempt >= b.cfg.MaxDeliveries:
				log.Error("message dropped: the handler failed on the last attempt", "error", err, "max_deliveries", b.cfg.MaxDeliveries)
			default:
				log.Warn("handler failed; the message will be redelivered", "error", err, "retry_in", b.nakDelay().WaitTime(uint64(max(attempt, 1))))
			}
			return out, reported{err}
		}
	}
}

// retry is watermill's Retry middleware with the Bus's backoff: no jitter,
// so that RetryMin and RetryMax mean what they say.
func (b *Bus) retry(log *slog.Logger) message.HandlerMiddleware {
	return func(next message.HandlerFunc) message.HandlerFunc {
		return func(m *message.Message) ([]*message.Message, error) {
			r := middleware.Retry{
				MaxRetries:      b.cfg.Retries,
				InitialInterval: b.cfg.RetryMin,
				MaxInterval:     b.cfg.RetryMax,
				Multiplier:      2,
				Logger:          retryLog{messageLog(log, m)},
			}
			return r.Middleware(next)(m)
		}
	}
}

// dropPermanent acks a message whose handler failed for good: retrying
// cannot help.
func dropPermanent(log *slog.Logger) message.HandlerMiddleware {
	return func(next message.HandlerFunc) message.HandlerFunc {
		return func(m *message.Message) ([]*message.Message, error) {
			out, err := next(m)
			if errors.Is(err, ErrPermanent) {
				messageLog(log, m).Error("message dropped: the handler failed permanently", "error", err)
				return out, nil
			}
			return out, err
		}
	}
}

// reported is a handler error settle has logged already: the Router's own
// log line about it goes to debug (see quietClosed).
type reported struct{ err error }

func (e reported) Error() string { return e.err.Error() }
func (e reported) Unwrap() error { return e.err }

// retryLog logs middleware.Retry's line about each retry as a warning
// (watermill logs it as an error: the message is not lost, though).
type retryLog struct{ log *slog.Logger }

var _ watermill.LoggerAdapter = retryLog{}

func (l retryLog) Error(_ string, err error, fields watermill.LogFields) {
	l.log.Warn("handler failed; retrying", "error", err, "retry", fields["retry_no"], "retry_in", fields["wait_time"])
}
func (l retryLog) Info(string, watermill.LogFields)                 {}
func (l retryLog) Debug(string, watermill.LogFields)                {}
func (l retryLog) Trace(string, watermill.LogFields)                {}
func (l retryLog) With(watermill.LogFields) watermill.LoggerAdapter { return l }

// handOver is the subscriber the Router reads: it passes on what
// watermill-nats delivers until the Router's context ends, then drains
// the connection, nacking the messages delivered meanwhile (prefetched,
// or pushed before the server processed the unsubscribe) so that they
// are redelivered at once rather than after AckWait. The Router alone
// would let watermill-nats drop them unacknowledged. The ack or nack of
// the message being handled is sent before the connection closes: the
// drain waits for it.
type handOver struct {
	nc        *nats.Conn
	msgs      <-chan *message.Message // watermill-nats's
	closed    <-chan struct{}         // the connection closed
	cancelSub context.CancelFunc      // ends watermill-nats's subscription
	log       *slog.Logger

	once sync.Once
	done chan struct{} // closed once the connection is closed and msgs drained
	err  error         // why it stopped on its own; read after done
}

var _ message.Subscriber = (*handOver)(nil)

// Subscribe returns the messages for the Router until ctx ends. It is
// called once, by the Router.
func (s *handOver) Subscribe(ctx context.Context, _ string) (<-chan *message.Message, error) {
	out := make(chan *message.Message)
	s.once.Do(func() {
		go func() {
			defer close(s.done)
			defer close(out)
			s.err = s.forward(ctx, out)
			s.drain()
			s.cancelSub()
			for range s.msgs {
				// watermill-nats closes msgs once it let go of the subscription.
			}
		}()
	})
	return out, nil
}

// Close is called by the Router when it closes; the subscription ends
// with the Router's context.
func (s *handOver) Close() error { return nil }

// forward passes messages on until ctx ends or the connection is closed
// for good.
func (s *handOver) forward(ctx context.Context, out chan<- *message.Message) error {
	for {
		// Stopping wins over a message that is ready at the same time.
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.closed:
			return unavailable("bus.handle", errors.New("connection closed"))
		case m, ok := <-s.msgs:
			if !ok {
				return unavailable("bus.handle", errors.New("subscription ended"))
			}
			select {
			case out <- m:
			case <-ctx.Done():
				m.Nack()
				return nil
			}
		}
	}
}

// drain stops delivery to this connection and waits until it is closed,
// nacking what watermill-nats hands out meanwhile.
func (s *handOver) drain() {
	if err := s.nc.Drain(); err != nil {
		s.log.Warn("drain failed; closing", "error", err)
		s.nc.Close()
	}
	msgs := s.msgs
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			m.Nack()
		case <-s.closed:
			return
		}
	}
}
