package commands

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

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
// collided do not collide again in lockstep.
type retryPolicy struct {
	attempts   int
	backoff    time.Duration
	maxBackoff time.Duration
}

// wait sleeps before attempt n+1 (n >= 1), or returns early with the
// context's error.
func (p retryPolicy) wait(ctx context.Context, n int) error {
	ceiling := p.backoff << min(n-1, 16)
	if ceiling > p.maxBackoff || ceiling <= 0 {
		ceiling = p.maxBackoff
	}
	if ceiling <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(rand.N(ceiling) + 1)
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
	var zero A
	for attempt := 1; ; attempt++ {
		l, err := r.load(ctx, stream)
		if err != nil {
			return zero, 0, err
		}
		events, err := decide(l.agg)
		if err != nil {
			return zero, 0, err
		}
		if len(events) == 0 {
			return l.agg, l.position, nil
		}
		data, err := encode(events, md)
		if err != nil {
			return zero, 0, err
		}
		data, release, err := withAccessRecord(ctx, stream, md, data)
		if err != nil {
			return zero, 0, err
		}
		res, err := r.store.Append(ctx, stream.String(), eventstore.Exact(l.revision), data...)
		if err != nil {
			release()
		}
		if err == nil {
			after, err := r.fold(l, events)
			return after, res.Position, err
		}
		if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			if !definitelyNotWritten(err) {
				err = &uncertainAppendError{stream: stream.String(), err: err}
			}
			return zero, 0, storeError(op, err)
		}
		if attempt >= r.retry.attempts {
			return zero, 0, &domain.Error{Op: op, Kind: domain.KindConflict, Err: err,
				Message: fmt.Sprintf("gave up after %d attempts against concurrent writers", attempt)}
		}
		if werr := r.retry.wait(ctx, attempt); werr != nil {
			return zero, 0, storeError(op, werr)
		}
	}
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
	data, release, err := withAccessRecord(ctx, stream, md, data)
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
	data, release, err := withAccessRecord(ctx, stream, md, data)
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
			Metadata: md,
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
