package eventstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Message is what a subscription delivers: one event, or the marker that
// the subscription has caught up with the head of the log.
type Message struct {
	// Event is set when CaughtUp is false.
	Event RecordedEvent
	// CaughtUp is true exactly once per subscription: every event committed
	// before that moment has been delivered; live events follow.
	CaughtUp bool
}

// Subscription is a running subscription to the global log.
type Subscription interface {
	// Messages delivers events in position order. It is closed when the
	// subscription ends.
	Messages() <-chan Message
	// Err tells why the subscription ended once Messages is closed: nil
	// after Close, the context's error after cancellation, or the error that
	// stopped it (e.g. ErrClosed when the store closed).
	Err() error
	// Close ends the subscription and waits until its goroutine has exited.
	Close()
}

// Reader is what the polling subscription needs from a backend: a ReadAll
// that honours the Store contract.
type Reader interface {
	ReadAll(ctx context.Context, after uint64, limit int) ([]RecordedEvent, error)
}

// PollOptions tune a polling subscription.
type PollOptions struct {
	// BatchSize is how many events one poll reads (default 512).
	BatchSize int
	// Interval is the longest time between two polls when no wake-up comes
	// (default 250ms). Polling is the truth; wake-ups only shorten waits.
	Interval time.Duration
	// Buffer is the capacity of the Messages channel (default 1024).
	Buffer int
	// Done, when closed, ends the subscription with ErrClosed (the store's
	// own shutdown).
	Done <-chan struct{}
}

func (o PollOptions) withDefaults() PollOptions {
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.Buffer <= 0 {
		o.Buffer = 1024
	}
	return o
}

// NewPollingSubscription starts a subscription that reads r from after,
// waking up on n (may be nil) and at least every opts.Interval. After a
// wake-up that finds nothing new, it polls again with a short exponential
// back-off, because a backend may hold back committed events until
// concurrent transactions finish (the PostgreSQL horizon).
func NewPollingSubscription(ctx context.Context, r Reader, n *Notifier, after uint64, opts PollOptions) Subscription {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(ctx)
	s := &pollingSubscription{
		out:    make(chan Message, opts.Buffer),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go s.run(ctx, r, n, after, opts)
	return s
}

type pollingSubscription struct {
	out    chan Message
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	err    error
	closed bool
}

func (s *pollingSubscription) Messages() <-chan Message { return s.out }

func (s *pollingSubscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *pollingSubscription) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
}

func (s *pollingSubscription) finish(err error) {
	s.mu.Lock()
	if s.closed {
		err = nil
	}
	s.err = err
	s.mu.Unlock()
	close(s.out)
	close(s.done)
}

const minBackoff = 500 * time.Microsecond

func (s *pollingSubscription) run(ctx context.Context, r Reader, n *Notifier, after uint64, opts PollOptions) {
	caughtUp := false
	var wake <-chan struct{}
	backoff := time.Duration(0) // >0 while chasing a wake-up that found nothing yet
	timer := time.NewTimer(opts.Interval)
	defer timer.Stop()
	for {
		// Take the wake-up channel before reading, so a commit that lands
		// between the read and the wait is not missed.
		if n != nil {
			wake = n.Wait()
		}
		events, err := r.ReadAll(ctx, after, opts.BatchSize)
		if err != nil {
			if ctx.Err() != nil {
				s.finish(ctx.Err())
				return
			}
			if errors.Is(err, ErrClosed) {
				s.finish(err)
				return
			}
			// A passing database error: retry after the interval rather than
			// ending the subscription.
			events = nil
			backoff = 0
		}
		for _, ev := range events {
			if ev.Position <= after {
				s.finish(errors.New("eventstore: backend returned positions out of order"))
				return
			}
			select {
			case s.out <- Message{Event: ev}:
				after = ev.Position
			case <-ctx.Done():
				s.finish(ctx.Err())
				return
			case <-opts.Done:
				s.finish(ErrClosed)
				return
			}
		}
		if len(events) == opts.BatchSize {
			continue // more to read right away
		}
		if !caughtUp && err == nil {
			caughtUp = true
			select {
			case s.out <- Message{CaughtUp: true}:
			case <-ctx.Done():
				s.finish(ctx.Err())
				return
			case <-opts.Done:
				s.finish(ErrClosed)
				return
			}
		}
		var wait time.Duration
		switch {
		case len(events) > 0:
			backoff = 0
			wait = opts.Interval
		case backoff > 0:
			wait = backoff
			backoff *= 2
			if backoff >= opts.Interval {
				backoff = 0
			}
		default:
			wait = opts.Interval
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			s.finish(ctx.Err())
			return
		case <-opts.Done:
			s.finish(ErrClosed)
			return
		case <-wake:
			backoff = minBackoff
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
