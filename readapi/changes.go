package readapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// The change feed behind GET /v1/events: one tail of the log per API,
// fanned out in-process to the open streams. For each event it waits until
// the read models reflect it (a client refetching the object sees the
// change), works out once which object changed and who may see it
// (changes_audience.go), and offers the change to every subscriber whose
// caller may see it. A subscriber has a bounded buffer; one that falls
// behind is dropped rather than making the others wait, and its client
// resumes with Last-Event-ID (events_stream.go).

// EventLog is what the query side reads of the event store: its head (a
// lookup that found nothing waits for the read models to reach it, and
// the change feed starts there), and the log itself (the feed's tail, and
// the catch-up of a resumed stream). eventstore/sqlite and
// eventstore/postgres stores provide it.
type EventLog interface {
	Head(ctx context.Context) (uint64, error)
	ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error)
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
}

// change is one change of an object the API serves: what a stream sends
// (kind, id, position, type) and who may see it.
type change struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Position uint64 `json:"position"`
	Type     string `json:"type"`
	audience audience
}

// subscriber is one open stream's place in the feed.
type subscriber struct {
	sees func(change) bool
	ch   chan change
	// dropped is closed when the feed dropped the subscriber (its buffer
	// was full) or stopped.
	dropped chan struct{}
}

// feed is the tail of the log shared by the streams.
type feed struct {
	log      EventLog
	waiter   Waiter
	classify func(context.Context, eventstore.RecordedEvent) (change, bool)
	buffer   int
	logger   *slog.Logger

	mu sync.Mutex
	// pos is the last position the feed has offered to its subscribers:
	// a subscriber added now receives the changes after it.
	pos     uint64
	subs    map[*subscriber]struct{}
	stopped bool
	// ready is closed once Run has read the head (pos is set).
	ready chan struct{}
	// running guards against a second run.
	running bool
	// sessions are the audiences of recent sessions (changes_audience.go).
	sessions sessionAudiences
}

func newFeed(log EventLog, waiter Waiter, buffer int, logger *slog.Logger, classify func(context.Context, eventstore.RecordedEvent) (change, bool)) *feed {
	return &feed{log: log, waiter: waiter, classify: classify, buffer: buffer, logger: logger,
		subs: map[*subscriber]struct{}{}, ready: make(chan struct{})}
}

// errFeedStopped: the change feed is not running (any more).
var errFeedStopped = errors.New("readapi: the change feed has stopped")

// run follows the log from its head until ctx ends (nil), or until the
// log or the read models fail (the error). Either way every subscriber is
// dropped, so the open streams end and a server shutdown does not wait
// for them.
func (f *feed) run(ctx context.Context) (err error) {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return errors.New("readapi: the change feed is already running")
	}
	f.running = true
	f.mu.Unlock()
	defer f.stop()
	// It starts where the read models are: every event up to there has
	// been delivered to them in order. The log's head is not such a
	// position on PostgreSQL, where a transaction still running may
	// commit below it; the head is the start only for a waiter that
	// cannot tell its position.
	head, ok := reachedPosition(f.waiter)
	if !ok {
		if head, err = f.log.Head(ctx); err != nil {
			return f.ended(ctx, fmt.Errorf("readapi: change feed: head: %w", err))
		}
	}
	f.mu.Lock()
	f.pos = head
	f.mu.Unlock()
	close(f.ready)
	sub, err := f.log.Subscribe(ctx, head)
	if err != nil {
		return f.ended(ctx, fmt.Errorf("readapi: change feed: subscribe: %w", err))
	}
	defer sub.Close()
	msgs := sub.Messages()
	var batch []eventstore.RecordedEvent
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-msgs:
			if !ok {
				return f.ended(ctx, fmt.Errorf("readapi: change feed: subscription ended: %w", sub.Err()))
			}
			if !m.CaughtUp {
				batch = append(batch, m.Event)
			}
		}
	fill: // whatever else is already there, up to a bound
		for len(batch) < 256 {
			select {
			case m, ok := <-msgs:
				if !ok {
					break fill
				}
				if !m.CaughtUp {
					batch = append(batch, m.Event)
				}
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			continue
		}
		// The changes go out only once a refetch would see them.
		if err := f.waitFor(ctx, batch[len(batch)-1].Position); err != nil {
			return f.ended(ctx, fmt.Errorf("readapi: change feed: %w", err))
		}
		for _, ev := range batch {
			if f.passUnwatched(ev.Position) {
				continue
			}
			c, ok := f.classify(ctx, ev)
			f.publish(c, ok, ev.Position)
		}
	}
}

// waitFor waits until the read models reflect position. A read model that
// cannot answer for a moment (its projector held by an online rebuild's
// swap, which answers unavailable) is waited for again, backing off up to
// feedRetryMax: the feed goes on once it is back, and ends only with ctx
// (the server's shutdown).
func (f *feed) waitFor(ctx context.Context, position uint64) error {
	delay := feedRetryMin
	for warned := false; ; warned = true {
		err := f.waiter.WaitFor(ctx, position)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !warned {
			f.logger.Warn("change feed: the read models cannot answer now; waiting", "position", position, "err", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, feedRetryMax)
	}
}

// The change feed's waits for read models that cannot answer for a
// moment.
const (
	feedRetryMin = 50 * time.Millisecond
	feedRetryMax = 2 * time.Second
)

// reachedPosition is the position w has reached (a projector's Position;
// the least of WaitAll's), or false when w cannot tell.
func reachedPosition(w Waiter) (uint64, bool) {
	switch w := w.(type) {
	case interface{ Position() uint64 }:
		return w.Position(), true
	case waitAll:
		least, ok := uint64(0), len(w) > 0
		for i, m := range w {
			p, known := reachedPosition(m)
			if !known {
				return 0, false
			}
			if i == 0 || p < least {
				least = p
			}
		}
		return least, ok
	}
	return 0, false
}

// ended is err, or nil when ctx has ended (the failure is the shutdown's).
func (f *feed) ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// publish offers c (when ok) to every subscriber that may see it and
// moves the feed to position. A subscriber whose buffer is full is
// dropped.
func (f *feed) publish(c change, ok bool, position uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ok {
		for s := range f.subs {
			if !s.sees(c) {
				continue
			}
			select {
			case s.ch <- c:
			default:
				delete(f.subs, s)
				close(s.dropped)
				f.logger.Info("change feed: dropped a stream that fell behind", slog.Uint64("position", position), slog.Int("buffer", f.buffer))
			}
		}
	}
	f.pos = position
}

// passUnwatched moves the feed to position when nobody subscribes, and
// says so: a change that no one would receive is not classified (which
// reads the read models). A subscriber that comes later starts after
// position, where the read models already are.
func (f *feed) passUnwatched(position uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) > 0 {
		return false
	}
	f.pos = position
	return true
}

// position is the last position offered to the subscribers.
func (f *feed) position() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos
}

// subscribe adds a subscriber that receives the changes sees accepts,
// after the returned position. It waits until the feed runs, at most
// until ctx ends.
func (f *feed) subscribe(ctx context.Context, sees func(change) bool) (*subscriber, uint64, error) {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return nil, 0, &domain.Error{Op: opEvents, Kind: domain.KindUnavailable, Message: "the change feed is not running yet; retry later", Err: ctx.Err()}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return nil, 0, &domain.Error{Op: opEvents, Kind: domain.KindUnavailable, Message: "the change feed has stopped", Err: errFeedStopped}
	}
	s := &subscriber{sees: sees, ch: make(chan change, f.buffer), dropped: make(chan struct{})}
	f.subs[s] = struct{}{}
	return s, f.pos, nil
}

// unsubscribe removes s (a stream that ended).
func (f *feed) unsubscribe(s *subscriber) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[s]; ok {
		delete(f.subs, s)
		close(s.dropped)
	}
}

// stop drops every subscriber and refuses new ones.
func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	for s := range f.subs {
		delete(f.subs, s)
		close(s.dropped)
	}
	select {
	case <-f.ready:
	default:
		close(f.ready) // subscribe then sees stopped
	}
}

// subscribers counts the open streams (tests and metrics).
func (f *feed) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}
