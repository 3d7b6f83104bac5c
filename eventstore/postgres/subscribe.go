package postgres

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// minCatchUpWait is the first pause of a subscription whose catch-up is held
// back by the horizon; pauses double up to Options.PollInterval.
const minCatchUpWait = time.Millisecond

// Subscribe implements eventstore.Store with the shared polling engine, woken
// by this Store's appends and by other processes' NOTIFYs.
//
// The engine says CaughtUp after its first short read. Here a short read
// does not mean the end of the log: the horizon may hold back events that
// committed before Subscribe was called, behind a transaction still running
// anywhere in the cluster. So Subscribe notes the last position committed
// when it is called, and the engine reads through catchUpReader, which
// returns a short page only once that position has been delivered.
func (s *Store) Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error) {
	if err := s.startListener(); err != nil {
		return nil, err
	}
	var head int64
	if err := s.pool.QueryRow(ctx, s.sql.head).Scan(&head); err != nil {
		return nil, s.translate(ctx, "subscribe", err)
	}
	r := &catchUpReader{s: s, head: uint64(head), reached: after >= uint64(head)}
	return eventstore.NewPollingSubscription(ctx, r, s.local, after, eventstore.PollOptions{
		Interval: s.opts.PollInterval,
		Done:     s.done,
	}), nil
}

// catchUpReader is the Reader of one subscription (used by its goroutine
// only).
type catchUpReader struct {
	s *Store
	// head is the last position committed when the subscription started;
	// reached turns true once it has been read.
	head    uint64
	reached bool
}

// ReadAll reads like Store.ReadAll, but until head is reached it returns
// only full pages or pages that reach head: it waits for the horizon to pass
// head instead of returning short.
func (r *catchUpReader) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if r.reached {
		return r.s.ReadAll(ctx, after, limit)
	}
	var out []eventstore.RecordedEvent
	wait := minCatchUpWait
	for {
		wake := r.s.local.Wait() // before reading, so no wake-up is missed
		page, err := r.s.ReadAll(ctx, after, limit-len(out))
		if err != nil {
			return nil, err // the engine reads again from its own position
		}
		out = append(out, page...)
		if len(page) > 0 {
			after = page[len(page)-1].Position
			wait = minCatchUpWait
		}
		if after >= r.head {
			r.reached = true
			return out, nil
		}
		if len(out) == limit {
			return out, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-r.s.done:
			timer.Stop()
			return nil, eventstore.ErrClosed
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
		wait = min(2*wait, r.s.opts.PollInterval)
	}
}
