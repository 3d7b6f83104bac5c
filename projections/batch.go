package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// process applies one batch: it decodes the events the projection
// handles, then applies them and moves the checkpoint in one transaction,
// trying again on failure. A batch with nothing to apply only moves the
// in-memory position, unless CheckpointEvery skipped events are owed a
// write.
func (p *Projector) process(ctx context.Context, c *cursor, batch []eventstore.RecordedEvent) error {
	events, bad, err := p.decode(batch)
	if err != nil {
		// Commit what precedes the event that does not decode, so the
		// read model stops right before it, then stop.
		if bad > 0 {
			if perr := p.process(ctx, c, batch[:bad]); perr != nil {
				return perr
			}
		}
		return err
	}
	last := batch[len(batch)-1].Position
	if len(events) == 0 {
		c.position = max(c.position, last)
		c.unwritten += len(batch)
		p.setPosition(c.position)
		if c.unwritten < p.opts.CheckpointEvery {
			return nil
		}
	}
	return p.retry(ctx, fmt.Sprintf("batch up to position %d", last), func() error {
		err := p.commit(ctx, c, events, last)
		if err != nil && !errors.Is(err, errResync) {
			p.metrics.batch(outcomeFailed, 0, 0)
		}
		return err
	})
}

// retry runs fn until it succeeds, waiting RetryBackoff after the first
// failure and doubling up to MaxRetryBackoff. It gives up after
// MaxAttempts failures, except on a KindUnavailable error (a full disk):
// the projector then pauses (Paused says why) and tries again until the
// database takes writes again or ctx ends, rather than stop the process
// over what making room will cure. errResync is returned at once.
func (p *Projector) retry(ctx context.Context, what string, fn func() error) error {
	defer p.setPaused(nil)
	backoff := p.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			if p.Paused() != nil {
				p.log.Info("projections: resumed, the database takes writes again", slog.String("what", what))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errResync) {
			return err
		}
		unavailable := domain.KindOf(err) == domain.KindUnavailable
		if !unavailable && attempt >= p.opts.MaxAttempts {
			return fmt.Errorf("projections: %s: %s failed %d times: %w", p.name, what, attempt, err)
		}
		if unavailable {
			if p.setPaused(err) {
				p.log.Error("projections: paused, the database takes no writes; trying again until it does",
					slog.String("what", what), slog.Any("error", err))
			}
		} else {
			p.log.Warn("projections: "+what+" failed, trying again",
				slog.Int("attempt", attempt), slog.Duration("backoff", backoff), slog.Any("error", err))
		}
		if err := sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, p.opts.MaxRetryBackoff)
	}
}

// decode returns the events of batch the projection handles, decoded. On
// failure it returns the index in batch of the event that did not decode.
func (p *Projector) decode(batch []eventstore.RecordedEvent) ([]Event, int, error) {
	var out []Event
	for i, rec := range batch {
		if !p.handled[rec.Type] {
			continue
		}
		payload, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
		if err != nil {
			return nil, i, &EventError{Projection: p.name, Phase: PhaseDecode, Position: rec.Position, Stream: rec.Stream, Type: rec.Type, Err: err}
		}
		out = append(out, Event{RecordedEvent: rec, Payload: payload})
	}
	return out, 0, nil
}

// commit applies events in one transaction and moves the checkpoint to
// last (or leaves it where another projector already moved it beyond).
// It first reads and locks the checkpoint row: events at or before the
// stored position were applied by another projector and are skipped; a
// stored position behind what this projector committed means the read
// model was reset, and commit returns errResync without writing.
func (p *Projector) commit(ctx context.Context, c *cursor, events []Event, last uint64) error {
	start := time.Now()
	var applied int
	var stored uint64
	var locked time.Time
	err := p.db.inTx(ctx, func(tx txn) error {
		locked = time.Now() // after BEGIN (IMMEDIATE on SQLite) got the lock
		cp, err := lockCheckpoint(ctx, p.db, tx, p.name)
		if err != nil {
			return err
		}
		if cp.position < c.committed {
			return errResync
		}
		for i := range events {
			ev := &events[i]
			if ev.Position <= cp.position {
				continue
			}
			if err := tx.Applying(ctx, ev); err != nil {
				return p.applyError(err, ev)
			}
			if err := p.proj.Apply(ctx, tx, *ev); err != nil {
				return p.applyError(err, ev)
			}
			applied++
		}
		if f, ok := p.proj.(Flusher); ok && applied > 0 {
			if err := f.Flush(ctx, tx); err != nil {
				return p.applyError(err, nil)
			}
		}
		if err := tx.Applying(ctx, nil); err != nil {
			return p.applyError(err, nil)
		}
		if err := tx.Flush(ctx); err != nil {
			return p.applyError(err, nil)
		}
		stored = max(cp.position, last)
		if stored != cp.position {
			if _, err := tx.Exec(ctx, p.db.cp.setPos, p.name, int64(stored)); err != nil {
				return fmt.Errorf("write checkpoint: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.held = time.Since(locked)
	c.committed = stored
	c.position = max(c.position, stored)
	c.unwritten = 0
	p.setPosition(c.position)
	p.metrics.batch(outcomeCommitted, applied, time.Since(start))
	return nil
}

// applyError is err as an *EventError naming the event that caused it:
// the one whose Apply queued the failing statement, else ev. Failures
// outside any event (nil) are returned as they are.
func (p *Projector) applyError(err error, ev *Event) error {
	var q *QueuedError
	if errors.As(err, &q) && q.Event != nil {
		ev, err = q.Event, q.Err
	}
	if ev == nil {
		return err
	}
	return &EventError{Projection: p.name, Phase: PhaseApply, Position: ev.Position, Stream: ev.Stream, Type: ev.Type, Err: err}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
