package sqlite

import (
	"context"
	"sync/atomic"

	"github.com/cairnhq/cairn/eventstore"
)

// States of an append request. The caller and the writer race for the
// request with one compare-and-swap from queued: whoever wins decides
// whether it is written.
const (
	stateQueued    int32 = iota
	stateTaken           // the writer owns it: the caller waits for the outcome
	stateAbandoned       // the caller gave up (ctx done): never written
)

// appendRequest is one Append travelling to the writer.
type appendRequest struct {
	ctx      context.Context
	stream   string
	expected eventstore.ExpectedRevision
	events   []eventstore.PreparedEvent
	state    atomic.Int32
	// reply receives exactly one outcome once the writer has taken the
	// request (buffered: the writer never blocks on a caller).
	reply chan appendOutcome
}

type appendOutcome struct {
	result eventstore.AppendResult
	err    error
}

// Append writes events to the end of stream if the stream satisfies
// expected: see eventstore.Store, and the package documentation for group
// commit and cancellation.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return eventstore.AppendResult{}, err
	}
	prepared, err := eventstore.Prepare(stream, events, s.opts.MaxEventSize)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	req := &appendRequest{
		ctx:      ctx,
		stream:   stream,
		expected: expected,
		events:   prepared,
		reply:    make(chan appendOutcome, 1),
	}
	if err := s.enqueue(ctx, req); err != nil {
		return eventstore.AppendResult{}, err
	}
	return req.wait()
}

// enqueue hands req to the writer, unless the store is closed or ctx ends
// first (then req was never queued).
func (s *Store) enqueue(ctx context.Context, req *appendRequest) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return eventstore.ErrClosed
	}
	select {
	case s.writer.requests <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait returns the outcome of a queued request. If the caller's context
// ends first and the writer has not taken the request yet, the request is
// abandoned (never written) and the context's error returned; if the writer
// has taken it, wait keeps waiting for the real outcome, so a committed
// append is never reported as failed.
func (r *appendRequest) wait() (eventstore.AppendResult, error) {
	select {
	case out := <-r.reply:
		return out.result, out.err
	case <-r.ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateAbandoned) {
			return eventstore.AppendResult{}, r.ctx.Err()
		}
		out := <-r.reply
		return out.result, out.err
	}
}

// take is the writer's side of the race: it reports whether the writer now
// owns the request. A request whose context is already done is answered
// with that error and not taken further.
func (r *appendRequest) take() bool {
	if !r.state.CompareAndSwap(stateQueued, stateTaken) {
		return false // abandoned: its caller is gone
	}
	if err := r.ctx.Err(); err != nil {
		r.reply <- appendOutcome{err: err}
		return false
	}
	return true
}
