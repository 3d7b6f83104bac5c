package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cairnhq/cairn/eventstore"
)

// Statuses returned by append_events and stored_ids_status
// (migrations/0001_events.sql).
const (
	statusAppended        = 0 // stored_ids_status: none of the ids is stored
	statusAlreadyAppended = 1
	statusWrongExpected   = 2
	statusIDInOtherStream = 3
	statusPartialRetry    = 4
	statusPrecondition    = 5
	statusFenced          = 6 // the *_fenced functions (migration 0006)
)

const (
	// maxAppendBytes bounds the data plus metadata of one append: PostgreSQL
	// refuses a single value (here, each array parameter) of 1 GB or more.
	maxAppendBytes = 512 << 20
	// maxAppendAttempts bounds the retries of an append that lost a
	// deadlock (two appends racing to store the same ids in different
	// streams) or whose conflicting id vanished.
	maxAppendAttempts = 3
	// idConstraint is the unique constraint on event ids.
	idConstraint = "events_id_key"
)

// appendArgs are an append's events as the parallel arrays append_events
// takes.
type appendArgs struct {
	ids      [][16]byte
	types    []string
	versions []int32
	data     [][]byte
	metadata [][]byte
}

func newAppendArgs(events []eventstore.PreparedEvent) (appendArgs, error) {
	a := appendArgs{
		ids:      make([][16]byte, len(events)),
		types:    make([]string, len(events)),
		versions: make([]int32, len(events)),
		data:     make([][]byte, len(events)),
		metadata: make([][]byte, len(events)),
	}
	total := 0
	for i, ev := range events {
		a.ids[i] = ev.ID
		a.types[i] = ev.Type
		a.versions[i] = int32(ev.Version)
		a.data[i] = ev.Data
		a.metadata[i] = ev.MetadataJSON
		total += len(ev.Data) + len(ev.MetadataJSON)
	}
	if total > maxAppendBytes {
		return appendArgs{}, &eventstore.InvalidEventError{Index: -1, Field: "events",
			Reason: fmt.Sprintf("the append is %d bytes, the PostgreSQL store takes at most %d in one append", total, maxAppendBytes)}
	}
	return a, nil
}

// Append implements eventstore.Store in one round trip: append_events runs
// as its own transaction (see the package documentation).
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if s.closed.Load() {
		return eventstore.AppendResult{}, eventstore.ErrClosed
	}
	prepared, err := eventstore.Prepare(stream, events, s.opts.MaxEventSize)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	args, err := newAppendArgs(prepared)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	for attempt := 1; ; attempt++ {
		res, err := s.appendOnce(ctx, stream, expected, args)
		if err == nil || !errors.Is(err, errRetryAppend) {
			return res, err
		}
		if attempt == maxAppendAttempts {
			return res, fmt.Errorf("eventstore/postgres: append to %q: gave up after %d attempts: %w", stream, attempt, err)
		}
	}
}

// errRetryAppend marks an append attempt that failed without writing and
// may succeed when tried again.
var errRetryAppend = errors.New("retryable")

func (s *Store) appendOnce(ctx context.Context, stream string, expected eventstore.ExpectedRevision, a appendArgs) (eventstore.AppendResult, error) {
	var r statusRow
	var err error
	fence, fenced := eventstore.FenceFrom(ctx)
	switch {
	case len(a.ids) == 1:
		r, err = s.appendEvent(ctx, stream, expected, a)
	case fenced:
		r, err = s.queryStatus(ctx, s.sql.appendFenced, fence.Lease, fence.Epoch, stream, expected.Code(), a.ids, a.types, a.versions, a.data, a.metadata)
	default:
		r, err = s.queryStatus(ctx, s.sql.append, stream, expected.Code(), a.ids, a.types, a.versions, a.data, a.metadata)
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != codeUniqueViolation || pgErr.ConstraintName != idConstraint {
			return eventstore.AppendResult{}, s.appendError(ctx, stream, err)
		}
		// An id is already stored and the expectation held: a retry (with
		// an expectation that still holds, such as Any) or a duplicate. The
		// append that stored it has committed, so stored_ids_status sees it.
		r, err = s.queryStatus(ctx, s.sql.storedIDs, stream, a.ids)
		if err != nil {
			return eventstore.AppendResult{}, s.translate(ctx, "look up stored event ids", err)
		}
		if r.status == statusAppended {
			return eventstore.AppendResult{}, fmt.Errorf("%w: a conflicting event id is not stored after all", errRetryAppend)
		}
		return s.storedIDsResult(stream, r)
	}
	switch r.status {
	case statusAppended:
		if len(a.ids) > 0 {
			s.appended()
		}
		return r.result(), nil
	case statusWrongExpected:
		return eventstore.AppendResult{}, &eventstore.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: r.revision.Int64}
	case statusPrecondition:
		return eventstore.AppendResult{}, fmt.Errorf("eventstore/postgres: append to %q: append_events must run alone in a READ COMMITTED transaction", stream)
	case statusFenced:
		return eventstore.AppendResult{}, &eventstore.FencedError{Fence: fence, Current: r.revision.Int64}
	}
	return s.storedIDsResult(stream, r)
}

// statusRow is what append_events and stored_ids_status return.
type statusRow struct {
	status   int32
	revision pgtype.Int8
	position pgtype.Int8
	conflict pgtype.UUID
}

func (r statusRow) result() eventstore.AppendResult {
	return eventstore.AppendResult{Revision: r.revision.Int64, Position: uint64(r.position.Int64)}
}

func (s *Store) queryStatus(ctx context.Context, sql string, args ...any) (statusRow, error) {
	var r statusRow
	err := s.pool.QueryRow(ctx, sql, args...).Scan(&r.status, &r.revision, &r.position, &r.conflict)
	return r, err
}

// appendEvent is the common case of one event: scalar parameters and one
// bigint[] back (append_event_packed, migration 0003; fenced by the
// context's eventstore.Fence, if any, through append_event_packed_fenced).
func (s *Store) appendEvent(ctx context.Context, stream string, expected eventstore.ExpectedRevision, a appendArgs) (statusRow, error) {
	var packed []int64
	var row pgx.Row
	if f, ok := eventstore.FenceFrom(ctx); ok {
		row = s.pool.QueryRow(ctx, s.sql.appendOneFenced, f.Lease, f.Epoch, stream, expected.Code(), a.ids[0], a.types[0], a.versions[0], a.data[0], a.metadata[0])
	} else {
		row = s.pool.QueryRow(ctx, s.sql.appendOne, stream, expected.Code(), a.ids[0], a.types[0], a.versions[0], a.data[0], a.metadata[0])
	}
	err := row.Scan(&packed)
	if err != nil {
		return statusRow{}, err
	}
	if len(packed) != 3 {
		return statusRow{}, fmt.Errorf("eventstore/postgres: append to %q: append_event_packed returned %d values, want 3", stream, len(packed))
	}
	r := statusRow{
		status:   int32(packed[0]),
		revision: pgtype.Int8{Int64: packed[1], Valid: true},
		position: pgtype.Int8{Int64: packed[2], Valid: true},
	}
	if r.status == statusIDInOtherStream || r.status == statusPartialRetry {
		// The packed result has no room for the conflicting id; the answer
		// of stored_ids_status cannot have changed (stored events never do).
		return s.queryStatus(ctx, s.sql.storedIDs, stream, a.ids)
	}
	return r, nil
}

// storedIDsResult maps the statuses about stored ids.
func (s *Store) storedIDsResult(stream string, r statusRow) (eventstore.AppendResult, error) {
	switch r.status {
	case statusAlreadyAppended:
		return r.result(), nil
	case statusIDInOtherStream:
		return eventstore.AppendResult{}, &eventstore.DuplicateEventError{ID: uuid.UUID(r.conflict.Bytes), Stream: stream, Reason: "already stored in another stream"}
	case statusPartialRetry:
		return eventstore.AppendResult{}, &eventstore.DuplicateEventError{ID: uuid.UUID(r.conflict.Bytes), Stream: stream,
			Reason: "the append repeats events stored in this stream but does not match them (a partial or reordered retry)"}
	default:
		return eventstore.AppendResult{}, fmt.Errorf("eventstore/postgres: append to %q: unknown status %d", stream, r.status)
	}
}

// appendError translates the error of an append_events call.
func (s *Store) appendError(ctx context.Context, stream string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == codeDeadlockDetected || pgErr.Code == codeSerializationFailure:
			return fmt.Errorf("%w: %w", errRetryAppend, err)
		case pgErr.Code == codeNumericOutOfRange:
			return fmt.Errorf("eventstore/postgres: append to %q: the cluster's transaction ids no longer fit in a position (2^43 used): %w", stream, err)
		case pgErr.Code == codeProgramLimitExceeded || strings.HasPrefix(pgErr.Code, classDataException):
			return &eventstore.InvalidEventError{Index: -1, Field: "events",
				Reason: fmt.Sprintf("refused by PostgreSQL (SQLSTATE %s): %s", pgErr.Code, pgErr.Message)}
		}
	}
	return s.translate(ctx, fmt.Sprintf("append to %q", stream), err)
}
