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

// appendRequest is one Append or AppendMany travelling to the writer.
type appendRequest struct {
	ctx context.Context
	// parts are the streams appended to: one for Append. The writer
	// applies them all or none.
	parts []appendPart
	state atomic.Int32
	// reply receives exactly one outcome once the writer has taken the
	// request (buffered: the writer never blocks on a caller).
	reply chan appendOutcome
}

// appendPart is what one stream of a request gets.
type appendPart struct {
	stream   string
	expected eventstore.ExpectedRevision
	events   []eventstore.PreparedEvent
	// metadata are the events' metadata as a read decodes them (for the
	// store's tail; nil without one).
	metadata []eventstore.Metadata
}

// appendOutcome is a request's outcome: a result per part, or why none
// was written.
type appendOutcome struct {
	results []eventstore.AppendResult
	err     error
}

// result is the outcome of a single-part request (Append).
func (o appendOutcome) result() eventstore.AppendResult {
	if len(o.results) == 0 {
		return eventstore.AppendResult{}
	}
	return o.results[0]
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
	part, err := newAppendPart(stream, expected, prepared, s.tail != nil)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	req := newAppendRequest(ctx, []appendPart{part})
	if err := s.enqueue(ctx, req); err != nil {
		return eventstore.AppendResult{}, err
	}
	out := req.wait()
	return out.result(), out.err
}

// AppendMany writes several appends in one request to the writer, which
// applies them in one savepoint of its batch transaction: all or none. See
// eventstore.Store.
func (s *Store) AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prepared, err := eventstore.PrepareMany(parts, s.opts.MaxEventSize)
	if err != nil {
		return nil, err
	}
	if len(prepared) == 0 {
		return []eventstore.AppendResult{}, nil
	}
	req := newAppendRequest(ctx, make([]appendPart, len(prepared)))
	for i, p := range prepared {
		if req.parts[i], err = newAppendPart(p.Stream, p.Expected, p.Events, s.tail != nil); err != nil {
			return nil, err
		}
	}
	if err := s.enqueue(ctx, req); err != nil {
		return nil, err
	}
	out := req.wait()
	return out.results, out.err
}

func newAppendRequest(ctx context.Context, parts []appendPart) *appendRequest {
	return &appendRequest{ctx: ctx, parts: parts, reply: make(chan appendOutcome, 1)}
}

// newAppendPart builds one stream's part of a request. With keep (the
// store has a tail, which keeps the events) the events' data is copied
// (the caller may reuse its buffers) and their metadata decoded as a read
// would, here in the caller's goroutine, once for every reader.
func newAppendPart(stream string, expected eventstore.ExpectedRevision, prepared []eventstore.PreparedEvent, keep bool) (appendPart, error) {
	part := appendPart{stream: stream, expected: expected, events: prepared}
	if !keep {
		return part, nil
	}
	size := 0
	for _, ev := range prepared {
		size += len(ev.Data)
	}
	buf := make([]byte, 0, size)
	part.metadata = make([]eventstore.Metadata, len(prepared))
	for i, ev := range prepared {
		at := len(buf)
		buf = append(buf, ev.Data...)
		prepared[i].Data = buf[at:len(buf):len(buf)]
		if md := metadataColumn(ev.MetadataJSON); md != nil {
			var err error
			if part.metadata[i], err = eventstore.DecodeMetadata(ev.MetadataJSON); err != nil {
				return part, err
			}
		}
	}
	return part, nil
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
func (r *appendRequest) wait() appendOutcome {
	select {
	case out := <-r.reply:
		return out
	case <-r.ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateAbandoned) {
			return appendOutcome{err: r.ctx.Err()}
		}
		return <-r.reply
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
