package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// aggregate is what the repository needs of a loaded aggregate: the
// revision to expect on the next append (-1 for a new stream).
type aggregate interface {
	Revision() int64
}

// repository loads one kind of aggregate from its streams and appends the
// events decided on it, with optimistic concurrency.
type repository[A aggregate] struct {
	store     EventStore
	rehydrate func([]domain.RecordedEvent) (A, error)
	retry     retryPolicy
}

// retryPolicy bounds the load-decide-append attempts of one command and
// spaces them with a jittered exponential backoff, so writers that
// collided do not collide again in lockstep: the wait after the n-th
// conflict is uniform up to backoff·2^(n-1), capped at maxBackoff.
type retryPolicy struct {
	attempts   int
	backoff    time.Duration
	maxBackoff time.Duration
}

// newBackOff is the policy as a backoff.BackOff for one command: a
// randomization factor of 1 spreads each wait uniformly over [0, 2×the
// current interval], so intervals of half the ceilings give waits up to
// backoff, doubling, up to maxBackoff; it stops after attempts tries or
// when ctx ends.
func (p retryPolicy) newBackOff(ctx context.Context) backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = min(p.backoff, p.maxBackoff) / 2
	b.MaxInterval = p.maxBackoff / 2
	b.Multiplier = 2
	b.RandomizationFactor = 1
	b.MaxElapsedTime = 0
	b.Reset()
	return backoff.WithContext(backoff.WithMaxRetries(b, uint64(max(p.attempts-1, 0))), ctx)
}

// waitNext sleeps b's next interval, for the loops that decide by
// themselves when to give up (they stop before b does); it returns the
// context's error when ctx ends first.
func waitNext(ctx context.Context, b backoff.BackOff) error {
	d := b.NextBackOff()
	if d == backoff.Stop {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("commands: no attempt left")
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// loaded is an aggregate with the events it was folded from, the
// stream's revision and the position of its last event (0 for an empty
// stream).
//
// events are the stream's, annotations (access records written with a
// command's events) included; the aggregate's fold leaves those out
// (domain), so its own revision may be lower than the stream's revision,
// which is what appends expect.
type loaded[A aggregate] struct {
	agg      A
	events   []domain.RecordedEvent
	revision int64
	position uint64
}

// load reads a stream and folds it. A stream without events folds into a
// new aggregate (revision -1).
func (r repository[A]) load(ctx context.Context, stream domain.Stream) (loaded[A], error) {
	const op = "commands.load"
	l := loaded[A]{revision: -1}
	recorded, err := r.store.ReadStream(ctx, stream.String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		return l, storeError(op, err)
	}
	if l.events, err = DecodeStream(recorded); err != nil {
		return l, &domain.Error{Op: op, Kind: domain.KindInternal, Message: stream.String(), Err: err}
	}
	if n := len(recorded); n > 0 {
		l.revision, l.position = recorded[n-1].Revision, recorded[n-1].Position
	}
	if l.agg, err = r.rehydrate(l.events); err != nil {
		return l, &domain.Error{Op: op, Kind: domain.KindInternal, Message: stream.String(), Err: err}
	}
	return l, nil
}

// update loads the aggregate, decides, and appends what was decided with
// the revision it was loaded at; when another writer appended in between,
// it starts over with fresh state, up to the policy's attempts. It returns
// the aggregate after the change and the position of the last event
// appended, or, when the decision returned no events, the aggregate as
// loaded and the position of the stream's last event.
//
// Errors from decide are returned as they are and nothing is written. An
// append that failed in a way that may still have written the events is
// marked (see appendUncertain) and not retried.
func (r repository[A]) update(ctx context.Context, stream domain.Stream, md Metadata, decide func(A) ([]domain.Event, error)) (A, uint64, error) {
	const op = "commands.update"
	var (
		zero, after A
		position    uint64
		attempt     int
		final       error
	)
	// stop ends the attempts with err (nil: success).
	stop := func(err error) error {
		final = err
		return backoff.Permanent(err)
	}
	err := backoff.Retry(func() error {
		attempt++
		l, err := r.load(ctx, stream)
		if err != nil {
			return stop(err)
		}
		events, err := decide(l.agg)
		if err != nil {
			return stop(err)
		}
		if len(events) == 0 {
			after, position = l.agg, l.position
			return nil
		}
		data, err := encode(events, md)
		if err != nil {
			return stop(err)
		}
		data, release, err := withAccessRecord(stream, md, data)
		if err != nil {
			return stop(err)
		}
		res, err := r.store.Append(ctx, stream.String(), eventstore.Exact(l.revision), data...)
		if err == nil {
			position = res.Position
			after, err = r.fold(l, events)
			return stop(err)
		}
		release()
		if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			if !definitelyNotWritten(err) {
				err = &uncertainAppendError{stream: stream.String(), err: err}
			}
			return stop(storeError(op, err))
		}
		return err // another writer got there first: decide again
	}, r.retry.newBackOff(ctx))
	switch {
	case err == nil:
		return after, position, nil
	case final != nil:
		return zero, 0, final
	case errors.Is(err, eventstore.ErrWrongExpectedRevision):
		return zero, 0, &domain.Error{Op: op, Kind: domain.KindConflict, Err: err,
			Message: fmt.Sprintf("gave up after %d attempts against concurrent writers", attempt)}
	}
	return zero, 0, storeError(op, err) // the context ended while waiting
}

// appendAt appends events decided on l, expecting the revision l was
// loaded at, without retrying: a concurrent writer makes it fail with an
// error that matches eventstore.ErrWrongExpectedRevision, and the caller
// re-decides. Batch commands use it to decide many aggregates before
// writing any.
func (r repository[A]) appendAt(ctx context.Context, stream domain.Stream, l loaded[A], md Metadata, events []domain.Event) (uint64, error) {
	return r.appendExpecting(ctx, stream, l.revision, md, events)
}

// appendExpecting is appendAt for a stream revision known without loading
// the stream (a process manager's folded view of it).
func (r repository[A]) appendExpecting(ctx context.Context, stream domain.Stream, revision int64, md Metadata, events []domain.Event) (uint64, error) {
	const op = "commands.append"
	data, err := encode(events, md)
	if err != nil {
		return 0, err
	}
	data, release, err := withAccessRecord(stream, md, data)
	if err != nil {
		return 0, err
	}
	res, err := r.store.Append(ctx, stream.String(), eventstore.Exact(revision), data...)
	if err != nil {
		release()
		if !definitelyNotWritten(err) {
			err = &uncertainAppendError{stream: stream.String(), err: err}
		}
		return 0, storeError(op, err)
	}
	return res.Position, nil
}

// create appends the first events of a new stream (expected: no stream).
func (r repository[A]) create(ctx context.Context, stream domain.Stream, md Metadata, events []domain.Event) (uint64, error) {
	const op = "commands.create"
	data, err := encode(events, md)
	if err != nil {
		return 0, err
	}
	data, release, err := withAccessRecord(stream, md, data)
	if err != nil {
		return 0, err
	}
	res, err := r.store.Append(ctx, stream.String(), eventstore.NoStream, data...)
	if err != nil {
		release()
	}
	if err != nil {
		if !definitelyNotWritten(err) {
			err = &uncertainAppendError{stream: stream.String(), err: err}
		}
		return 0, storeError(op, err)
	}
	return res.Position, nil
}

// fold returns the aggregate with the newly appended events folded in.
func (r repository[A]) fold(l loaded[A], events []domain.Event) (A, error) {
	all := append([]domain.RecordedEvent(nil), l.events...)
	for i, e := range events {
		all = append(all, domain.RecordedEvent{Revision: l.revision + 1 + int64(i), Event: e})
	}
	return r.rehydrate(all)
}

// encode turns decided events into store events: a fresh id each (once
// per attempt), the wire name and schema version, JSON data, metadata.
func encode(events []domain.Event, md Metadata) ([]eventstore.EventData, error) {
	out := make([]eventstore.EventData, len(events))
	for i, e := range events {
		data, err := domain.MarshalEvent(e)
		if err != nil {
			return nil, &domain.Error{Op: "commands.encode", Kind: domain.KindInternal, Message: e.EventType(), Err: err}
		}
		out[i] = eventstore.EventData{
			ID:       eventstore.NewEventID(),
			Type:     e.EventType(),
			Version:  domain.SchemaVersion,
			Data:     data,
			Metadata: md.Stored(),
		}
	}
	return out, nil
}

// DecodeStream decodes a stream's stored events for an aggregate's fold
// (domain.Rehydrate*), with their revisions. Annotations (access records)
// are decoded too: every fold leaves them out itself.
func DecodeStream(recs []eventstore.RecordedEvent) ([]domain.RecordedEvent, error) {
	out := make([]domain.RecordedEvent, len(recs))
	for i, r := range recs {
		ev, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			return nil, err
		}
		out[i] = domain.RecordedEvent{Revision: r.Revision, Event: ev}
	}
	return out, nil
}
