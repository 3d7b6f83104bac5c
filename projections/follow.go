package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// errResync: the checkpoint moved back under the projector (a rebuild
// reset it), so it must resubscribe from the stored position.
var errResync = errors.New("projections: checkpoint moved back")

// flushTimeout bounds the checkpoint write owed at shutdown.
const flushTimeout = 5 * time.Second

// cursor is the state of one pass over the log.
type cursor struct {
	// committed is the checkpoint as last read or written by this
	// projector.
	committed uint64
	// position is the last position received; every event up to it is
	// committed or needs no row.
	position uint64
	// unwritten counts the events received since committed that were
	// skipped without a write.
	unwritten int
	// held is how long the last batch transaction took.
	held time.Duration
}

// follow subscribes from the stored checkpoint and applies batches until
// ctx ends or an error stops it; with until set, also once the
// subscription has caught up or *until is reached (a rebuild's end).
// progress, if set, is told how many events each batch had.
func (p *Projector) follow(ctx context.Context, until *uint64, progress func(n int)) error {
	for {
		from, err := Checkpoint(ctx, p.db, p.name)
		if err != nil {
			return err
		}
		p.setPosition(from)
		c := &cursor{committed: from, position: from}
		sub, err := p.store.Subscribe(ctx, from)
		if err != nil {
			return fmt.Errorf("projections: %s: subscribe: %w", p.name, err)
		}
		p.log.Debug("projections: following the log", slog.Uint64("after", from))
		err = p.consume(ctx, sub, c, until, progress)
		sub.Close()
		if errors.Is(err, errResync) {
			p.metrics.batch(outcomeResync, 0, 0)
			p.log.Warn("projections: checkpoint moved back (a rebuild?), resubscribing from it", slog.Uint64("was", c.committed))
			continue
		}
		if c.position > c.committed {
			// Skipped events are owed a checkpoint: write it even when
			// ctx has ended, so a restart does not read them again.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			if ferr := p.commit(fctx, c, nil, c.position); ferr != nil && !errors.Is(ferr, errResync) {
				p.log.Warn("projections: could not write the checkpoint at shutdown", slog.Any("error", ferr))
			}
			cancel()
		}
		return err
	}
}

// consume applies the subscription's events in batches: one received
// event, then whatever else is already buffered, up to BatchSize.
func (p *Projector) consume(ctx context.Context, sub eventstore.Subscription, c *cursor, until *uint64, progress func(int)) error {
	msgs := sub.Messages()
	batch := make([]eventstore.RecordedEvent, 0, p.opts.BatchSize)
	for {
		batch = batch[:0]
		caughtUp := false
		take := func(m eventstore.Message) {
			if m.CaughtUp {
				caughtUp = true
			} else {
				batch = append(batch, m.Event)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m, ok := <-msgs:
			if !ok {
				return subscriptionEnded(p.name, sub.Err())
			}
			take(m)
		}
	fill:
		for len(batch) < p.opts.BatchSize {
			select {
			case m, ok := <-msgs:
				if !ok {
					break fill // the next receive reports the end
				}
				take(m)
			default:
				break fill
			}
		}
		if len(batch) > 0 {
			c.held = 0
			if err := p.process(ctx, c, batch); err != nil {
				return err
			}
			lag := time.Duration(0)
			if len(msgs) > 0 {
				lag = time.Since(batch[len(batch)-1].RecordedAt)
			}
			p.metrics.received(len(batch), lag)
			if progress != nil {
				progress(len(batch))
			}
			if err := p.yield(ctx, c, len(msgs) > 0); err != nil {
				return err
			}
		}
		if caughtUp {
			p.markCaughtUp(c.position)
		}
		if until != nil && (caughtUp || c.position >= *until) {
			return nil
		}
	}
}

// yield pauses after a batch transaction when more events are waiting, on
// SQLite only, unless the read model's database takes turns with the
// event store's writer (SQLiteOptions.LockWrites: the store's write gate hands the lock
// over in arrival order). Otherwise the store's writer waits for the
// database's single write lock with SQLite's busy back-off (sleeps of up to
// 100ms), and a projector catching up that takes the lock again at once
// can make it wait for seconds. A pause of Options.Yield times the
// transaction's length leaves it room (measured here with a writer
// appending flat out during a rebuild: the slowest append went from
// 0.8-1.1s to 0.1-0.3s at 0.25; the median stayed at 0.35ms either way).
func (p *Projector) yield(ctx context.Context, c *cursor, more bool) error {
	if p.db.dialect != SQLite || p.db.takesTurns() || !more || c.held <= 0 || p.opts.Yield <= 0 {
		return nil
	}
	return sleep(ctx, time.Duration(float64(c.held)*p.opts.Yield))
}

func subscriptionEnded(name string, err error) error {
	if err == nil {
		err = errors.New("closed")
	}
	return fmt.Errorf("projections: %s: subscription ended: %w", name, err)
}
