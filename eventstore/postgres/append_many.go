package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnhq/cairn/eventstore"
)

// manyArgs are an AppendMany's parts and events as the parallel arrays
// append_many takes (migration 0004).
type manyArgs struct {
	streams  []string
	expected []int64
	parts    []int32
	events   appendArgs
}

func newManyArgs(prepared []eventstore.PreparedAppend) (manyArgs, error) {
	a := manyArgs{streams: make([]string, len(prepared)), expected: make([]int64, len(prepared))}
	var all []eventstore.PreparedEvent
	for i, p := range prepared {
		a.streams[i] = p.Stream
		a.expected[i] = p.Expected.Code()
		for range p.Events {
			a.parts = append(a.parts, int32(i+1))
		}
		all = append(all, p.Events...)
	}
	var err error
	a.events, err = newAppendArgs(all)
	return a, err
}

// AppendMany implements eventstore.Store in one round trip: append_many
// runs as its own transaction, taking the streams' locks in key order (see
// the migration and the package documentation).
func (s *Store) AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	if s.closed.Load() {
		return nil, eventstore.ErrClosed
	}
	prepared, err := eventstore.PrepareMany(parts, s.opts.MaxEventSize)
	if err != nil {
		return nil, err
	}
	return s.appendMany(ctx, prepared)
}

func (s *Store) appendMany(ctx context.Context, prepared []eventstore.PreparedAppend) ([]eventstore.AppendResult, error) {
	if len(prepared) == 0 {
		return []eventstore.AppendResult{}, nil
	}
	args, err := newManyArgs(prepared)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		res, err := s.appendManyOnce(ctx, prepared, args)
		if err == nil || !errors.Is(err, errRetryAppend) {
			return res, err
		}
		if attempt == maxAppendAttempts {
			return nil, fmt.Errorf("eventstore/postgres: append to %d streams: gave up after %d attempts: %w", len(prepared), attempt, err)
		}
	}
}

func (s *Store) appendManyOnce(ctx context.Context, prepared []eventstore.PreparedAppend, a manyArgs) ([]eventstore.AppendResult, error) {
	args := []any{a.streams, a.expected, a.parts, a.events.ids, a.events.types, a.events.versions, a.events.data, a.events.metadata}
	sql := s.sql.appendMany
	fence, fenced := eventstore.FenceFrom(ctx)
	if fenced {
		sql = s.sql.appendManyFenced
		args = append([]any{fence.Lease, fence.Epoch}, args...)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	var statuses []statusRow
	if err == nil {
		statuses, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (statusRow, error) {
			var r statusRow
			err := row.Scan(&r.status, &r.revision, &r.position, &r.conflict)
			return r, err
		})
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation && pgErr.ConstraintName == idConstraint {
			return s.appendManyStored(ctx, prepared)
		}
		return nil, s.appendError(ctx, fmt.Sprintf("%d streams from %q", len(prepared), prepared[0].Stream), err)
	}
	if len(statuses) == 1 && statuses[0].status == statusPrecondition {
		return nil, errors.New("eventstore/postgres: append_many must run alone in a READ COMMITTED transaction")
	}
	if len(statuses) == 1 && statuses[0].status == statusFenced {
		return nil, &eventstore.FencedError{Fence: fence, Current: statuses[0].revision.Int64}
	}
	if len(statuses) != len(prepared) {
		return nil, fmt.Errorf("eventstore/postgres: append_many returned %d rows for %d streams", len(statuses), len(prepared))
	}
	out := make([]eventstore.AppendResult, len(prepared))
	wrote := false
	for i, r := range statuses {
		p := prepared[i]
		switch r.status {
		case statusAppended:
			out[i] = r.result()
			wrote = wrote || len(p.Events) > 0
		case statusAlreadyAppended:
			out[i] = r.result()
		case statusWrongExpected:
			return nil, &eventstore.WrongExpectedRevisionError{Stream: p.Stream, Expected: p.Expected, Actual: r.revision.Int64}
		default:
			_, err := s.storedIDsResult(p.Stream, r)
			return nil, err
		}
	}
	if wrote {
		s.appended()
	}
	return out, nil
}

// appendManyStored handles an AppendMany refused because an id is already
// stored, in a part whose expectation held: it classifies every part's ids
// (stored_ids_status, in one round trip). A part stored elsewhere or only
// in part refuses the call; parts already stored whole are retries, and the
// others are appended again without them (they committed before, so the
// call stays all or nothing).
func (s *Store) appendManyStored(ctx context.Context, prepared []eventstore.PreparedAppend) ([]eventstore.AppendResult, error) {
	var batch pgx.Batch
	var asked []int
	for i, p := range prepared {
		if len(p.Events) == 0 {
			continue
		}
		ids := make([][16]byte, len(p.Events))
		for j, ev := range p.Events {
			ids[j] = ev.ID
		}
		batch.Queue(s.sql.storedIDs, p.Stream, ids)
		asked = append(asked, i)
	}
	results := s.pool.SendBatch(ctx, &batch)
	status := make(map[int]statusRow, len(asked))
	for _, i := range asked {
		var r statusRow
		if err := results.QueryRow().Scan(&r.status, &r.revision, &r.position, &r.conflict); err != nil {
			return nil, errors.Join(s.translate(ctx, "look up stored event ids", err), results.Close())
		}
		status[i] = r
	}
	if err := results.Close(); err != nil {
		return nil, s.translate(ctx, "look up stored event ids", err)
	}
	var rest []eventstore.PreparedAppend
	var restAt []int
	out := make([]eventstore.AppendResult, len(prepared))
	for i, p := range prepared {
		r, ok := status[i]
		switch {
		case !ok || r.status == statusAppended:
			rest, restAt = append(rest, p), append(restAt, i)
		case r.status == statusAlreadyAppended:
			out[i] = r.result()
		default:
			_, err := s.storedIDsResult(p.Stream, r)
			return nil, err
		}
	}
	if len(rest) == len(prepared) {
		return nil, fmt.Errorf("%w: a conflicting event id is not stored after all", errRetryAppend)
	}
	more, err := s.appendMany(ctx, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range restAt {
		out[i] = more[j]
	}
	return out, nil
}
