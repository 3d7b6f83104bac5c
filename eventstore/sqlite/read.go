package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/cairnhq/cairn/eventstore"
)

const eventColumns = `position, id, stream, revision, type, version, data, metadata, recorded_at`

// readStmts are the read queries, prepared once on the read pool
// (database/sql prepares each on a pooled connection the first time that
// connection runs it, then reuses it).
type readStmts struct {
	all       *sql.Stmt
	span      *sql.Stmt
	forward   *sql.Stmt
	backward  *sql.Stmt
	hasStream *sql.Stmt
}

func prepareReads(ctx context.Context, db *sql.DB) (_ *readStmts, err error) {
	r := &readStmts{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	for _, st := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&r.all, `SELECT ` + eventColumns + ` FROM events WHERE position > ? ORDER BY position LIMIT ?`},
		{&r.span, `SELECT ` + eventColumns + ` FROM events WHERE position > ? AND position <= ? ORDER BY position`},
		{&r.forward, `SELECT ` + eventColumns + ` FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`},
		{&r.backward, `SELECT ` + eventColumns + ` FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`},
		{&r.hasStream, `SELECT EXISTS (SELECT 1 FROM events WHERE stream = ?)`},
	} {
		stmt, err := db.PrepareContext(ctx, st.query)
		if err != nil {
			return nil, translate("prepare "+st.query, err)
		}
		*st.dst = stmt
	}
	return r, nil
}

func (r *readStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{r.all, r.span, r.forward, r.backward, r.hasStream} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// sqlLimit turns a "<= 0 means no limit" count into SQLite's LIMIT.
func sqlLimit(limit int) int64 {
	if limit <= 0 {
		return -1
	}
	return int64(limit)
}

// DefaultReadAllLimit is the number of events ReadAll returns when called
// with limit <= 0 (as the PostgreSQL backend does by default).
const DefaultReadAllLimit = 1000

// ReadAll returns up to limit events (DefaultReadAllLimit when limit <= 0)
// with a position greater than after, in position order. A transaction commits its events
// at once and positions are assigned in commit order by the single writer,
// so a reader never sees a position before the ones below it.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if s.isClosed.Load() {
		return nil, eventstore.ErrClosed
	}
	if after >= math.MaxInt64 {
		return nil, ctx.Err()
	}
	if limit <= 0 {
		limit = DefaultReadAllLimit
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	events, ok, complete := s.tail.read(after, limit)
	switch {
	case !ok:
		return s.readAll(ctx, nil, after, limit)
	case len(events) == limit || complete:
		return events, nil
	}
	// The tail ran out before the limit: the database may hold newer
	// events (another Store on the file wrote them).
	return s.readAll(ctx, events, events[len(events)-1].Position, limit-len(events))
}

// splitRead is the smallest read of the database that ReadAll splits in
// two halves read at once, on two connections of the read pool: a replay
// (a rebuild, a projector catching up) then uses two cores.
const splitRead = 2048

// readAll adds to events up to limit events after position after, read
// from the database (none when limit is 0).
func (s *Store) readAll(ctx context.Context, events []eventstore.RecordedEvent, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if limit == 0 {
		return events, nil
	}
	s.databaseReads.Add(1)
	if limit >= splitRead && s.opts.ReadConns >= 2 && after < math.MaxInt64-uint64(limit) {
		return s.readHalves(ctx, events, after, limit)
	}
	rows, err := s.reads.all.QueryContext(ctx, int64(after), int64(limit))
	if err != nil {
		return nil, s.readError(ctx, "read all", err)
	}
	more, err := scanEvents(rows, limit)
	if err != nil {
		return nil, s.readError(ctx, "read all", err)
	}
	if events == nil {
		return more, nil
	}
	return append(events, more...), nil
}

// readHalves reads the positions after+1 ... after+limit as two spans at
// once. Positions are dense (the one writer gives each committed event the
// next one), so a span holding fewer events than positions ends where the
// log ends, as of its read. The two reads have their own snapshots: the
// second half is used only when the first is complete, so an event the
// first did not see yet is never skipped by one the second saw.
func (s *Store) readHalves(ctx context.Context, events []eventstore.RecordedEvent, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	mid, end := after+uint64(limit/2), after+uint64(limit)
	var first, second []eventstore.RecordedEvent
	var err, secondErr error
	if hook := afterFirstHalf; hook != nil {
		first, err = s.readSpan(ctx, after, mid)
		hook()
		second, secondErr = s.readSpan(ctx, mid, end)
	} else {
		done := make(chan struct{})
		go func() {
			defer close(done)
			second, secondErr = s.readSpan(ctx, mid, end)
		}()
		first, err = s.readSpan(ctx, after, mid)
		<-done
	}
	if err = errors.Join(err, secondErr); err != nil {
		return nil, err
	}
	events = append(events, first...)
	if uint64(len(first)) == mid-after {
		events = append(events, second...)
	}
	return events, nil
}

// afterFirstHalf, when set (tests), runs between the reads of the two
// halves, which then run one after the other: it lets a test commit
// events the second read sees and the first did not.
var afterFirstHalf func()

// readSpan reads the events at positions after+1 ... end.
func (s *Store) readSpan(ctx context.Context, after, end uint64) ([]eventstore.RecordedEvent, error) {
	rows, err := s.reads.span.QueryContext(ctx, int64(after), int64(end))
	if err != nil {
		return nil, s.readError(ctx, "read all", err)
	}
	events, err := scanEvents(rows, int(end-after))
	if err != nil {
		return nil, s.readError(ctx, "read all", err)
	}
	return events, nil
}

// ReadStream returns the events of one stream: see eventstore.Store and
// eventstore.ReadStreamOptions. A negative From reads forward from the
// start, or backward from the end. A stream without events is a
// *eventstore.StreamNotFoundError; a read past the end of an existing
// stream returns no events and no error.
func (s *Store) ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error) {
	if s.isClosed.Load() {
		return nil, eventstore.ErrClosed
	}
	stmt, from := s.reads.forward, max(opts.From, 0)
	if opts.Direction == eventstore.Backward {
		stmt, from = s.reads.backward, opts.From
		if from < 0 {
			from = math.MaxInt64
		}
	}
	events, err := queryStream(ctx, stmt, stream, from, opts.Limit)
	if err != nil {
		return nil, s.readError(ctx, "read stream", err)
	}
	if len(events) > 0 {
		return events, nil
	}
	// Nothing: a missing stream, or a read past the end? Answer both on one
	// snapshot, so a stream created in between cannot make it look like a
	// read past its end.
	events, err = s.readStreamSnapshot(ctx, stmt, stream, from, opts.Limit)
	if err != nil {
		return nil, s.readError(ctx, "read stream", err)
	}
	return events, nil
}

func queryStream(ctx context.Context, stmt *sql.Stmt, stream string, from int64, limit int) ([]eventstore.RecordedEvent, error) {
	rows, err := stmt.QueryContext(ctx, stream, from, sqlLimit(limit))
	if err != nil {
		return nil, err
	}
	return scanEvents(rows, limit)
}

func (s *Store) readStreamSnapshot(ctx context.Context, stmt *sql.Stmt, stream string, from int64, limit int) (_ []eventstore.RecordedEvent, err error) {
	tx, err := s.readDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		err = errors.Join(err, ignoreDone(tx.Rollback()))
	}()
	events, err := queryStream(ctx, tx.StmtContext(ctx, stmt), stream, from, limit)
	if err != nil || len(events) > 0 {
		return events, err
	}
	var exists bool
	if err := tx.StmtContext(ctx, s.reads.hasStream).QueryRowContext(ctx, stream).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, &eventstore.StreamNotFoundError{Stream: stream}
	}
	return events, nil
}

// readError is what a failed read returns: ErrClosed once the store is
// closed (the pool went away under the read), the context's error when it
// ended the read, the store's own errors as they are, else the wrapped
// driver error.
func (s *Store) readError(ctx context.Context, op string, err error) error {
	var notFound *eventstore.StreamNotFoundError
	switch {
	case errors.As(err, &notFound):
		return err
	case s.isClosed.Load():
		return eventstore.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return translate(op, err)
}
