package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/cairnhq/cairn/eventstore"
)

// ReadAll implements eventstore.Store: events after the given position and
// below the transaction horizon (see the package documentation), in
// position order. limit <= 0 reads Options.ReadAllLimit events.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if s.closed.Load() {
		return nil, eventstore.ErrClosed
	}
	s.allReads.Add(1)
	if limit <= 0 {
		limit = s.opts.ReadAllLimit
	}
	if after >= math.MaxInt64 {
		return nil, nil // no position is that large
	}
	if s.recent != nil {
		return s.recent.readAll(ctx, after, limit, s.queryAll)
	}
	return s.queryAll(ctx, after, limit)
}

// queryAll reads events after a position from the server.
func (s *Store) queryAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	rows, err := s.pool.Query(ctx, s.sql.readAll, int64(after), limit)
	if err != nil {
		return nil, s.translate(ctx, "read all", err)
	}
	events, err := collect(rows, limit)
	if err != nil {
		return nil, s.translate(ctx, "read all", err)
	}
	return events, nil
}

// ReadStream implements eventstore.Store. Stream reads see every committed
// event of the stream (no horizon): revisions of one stream are assigned
// under its lock, in commit order.
func (s *Store) ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error) {
	if s.closed.Load() {
		return nil, eventstore.ErrClosed
	}
	var query string
	from := opts.From
	switch opts.Direction {
	case eventstore.Forward:
		query = s.sql.forward
		from = max(from, 0)
	case eventstore.Backward:
		query = s.sql.backward
		if from < 0 {
			from = math.MaxInt64
		}
	default:
		return nil, &eventstore.InvalidEventError{Index: -1, Field: "direction", Reason: fmt.Sprintf("unknown direction %d", opts.Direction)}
	}
	var limit *int64 // NULL: no limit
	if opts.Limit > 0 {
		l := int64(opts.Limit)
		limit = &l
	}
	events, err := s.queryStream(ctx, query, stream, from, limit)
	if err != nil || len(events) > 0 {
		return events, err
	}
	// Nothing: is the stream missing, or did the read start past its end?
	// If the stream exists now, it may have been created after the read
	// above, so read again: a stream only grows, so an empty answer is then
	// a read past the end.
	var exists bool
	if err := s.pool.QueryRow(ctx, s.sql.exists, stream).Scan(&exists); err != nil {
		return nil, s.translate(ctx, "read stream", err)
	}
	if !exists {
		return nil, &eventstore.StreamNotFoundError{Stream: stream}
	}
	return s.queryStream(ctx, query, stream, from, limit)
}

func (s *Store) queryStream(ctx context.Context, query, stream string, from int64, limit *int64) ([]eventstore.RecordedEvent, error) {
	most := 0 // no limit
	if limit != nil {
		most = int(*limit)
	}
	rows, err := s.pool.Query(ctx, query, stream, from, limit)
	if err != nil {
		return nil, s.translate(ctx, "read stream", err)
	}
	events, err := collect(rows, most)
	if err != nil {
		return nil, s.translate(ctx, "read stream", err)
	}
	return events, nil
}
