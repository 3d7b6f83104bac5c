package projections

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/cairnhq/cairn/eventstore"
)

// SQLiteOptions are what a DB on SQLite takes from the event store whose
// file it shares (infra/readmodels.OpenSQLite fills them in from an
// eventstore/sqlite store).
type SQLiteOptions struct {
	// CloseWrite makes Close close the write handle too (it was opened for
	// this DB).
	CloseWrite bool
	// LockWrites, when set, is taken around each batch: the store's write
	// gate, so that batches and the store's appends take the write lock in
	// turns instead of meeting in SQLite's busy handler.
	LockWrites func(context.Context) (func(), error)
	// IsFull reports whether a driver error is SQLite's "disk full" (by its
	// code); when nil only eventstore.IsStorageFull counts.
	IsFull func(error) bool
}

// NewSQLite builds a DB over handles the caller owns. write must be a
// single-connection pool whose transactions start with BEGIN IMMEDIATE
// (sqlite.OpenRaw with conns 1 gives one); read may be nil, in which case
// queries go through write too (and wait behind the batches).
func NewSQLite(write, read *sql.DB, o SQLiteOptions) *DB {
	if read == nil {
		read = write
	}
	return NewDB(SQLite, "", &sqliteBackend{write: write, read: read, ownsWrite: o.CloseWrite, lockWrites: o.LockWrites, isFull: o.IsFull})
}

type sqliteBackend struct {
	write, read *sql.DB
	ownsWrite   bool
	isFull      func(error) bool
	// lockWrites, when set (SQLiteOptions.LockWrites), is taken around each
	// transaction: the store's Store.LockWrites, so that batches and the
	// store's appends take turns instead of meeting in SQLite's busy
	// handler.
	lockWrites func(context.Context) (func(), error)

	// stmts are the statements of Exec and Queue, prepared on the write
	// connection: projectors run the same few statements for every
	// event, and preparing one costs about as much as running it. A
	// statement is first run unprepared and noted in wanted; the next
	// begin prepares it, while the one connection is free (preparing
	// inside a transaction would wait for the transaction's own
	// connection).
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool
	// reads are the queries of Query and QueryRow, prepared on the read
	// pool (each connection prepares a statement once, when it first runs
	// it): the read side runs the same few queries on every request, and
	// SQLite's parsing and planning cost about as much as a point lookup.
	reads map[string]*sql.Stmt
}

// maxStmts bounds the prepared statements kept: read models use a fixed
// set of queries; any beyond run unprepared.
const maxStmts = 256

// stmt returns query's prepared statement, or nil (then it notes that
// query is wanted).
func (b *sqliteBackend) stmt(query string) *sql.Stmt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.stmts[query]; ok {
		return st
	}
	if len(b.stmts)+len(b.wanted) < maxStmts {
		if b.wanted == nil {
			b.wanted = make(map[string]bool)
		}
		b.wanted[query] = true
	}
	return nil
}

// prepareWanted prepares the statements noted since the last call,
// without holding mu (preparing waits for the connection, which another
// projector's transaction may hold while it looks statements up). A
// statement that does not prepare is not retried: it keeps running
// unprepared, and fails there with its error.
func (b *sqliteBackend) prepareWanted(ctx context.Context) {
	b.mu.Lock()
	var queries []string
	for query := range b.wanted {
		queries = append(queries, query)
	}
	clear(b.wanted)
	b.mu.Unlock()
	for _, query := range queries {
		st, err := b.write.PrepareContext(ctx, query)
		if err != nil {
			continue
		}
		b.mu.Lock()
		if _, dup := b.stmts[query]; dup {
			b.mu.Unlock()
			_ = st.Close()
			continue
		}
		if b.stmts == nil {
			b.stmts = make(map[string]*sql.Stmt)
		}
		b.stmts[query] = st
		b.mu.Unlock()
	}
}

func (b *sqliteBackend) IsFull(err error) bool {
	return (b.isFull != nil && b.isFull(err)) || eventstore.IsStorageFull(err)
}

// takesTurns reports whether transactions take the store's write gate.
func (b *sqliteBackend) takesTurns() bool { return b.lockWrites != nil }

func (b *sqliteBackend) Begin(ctx context.Context) (txn, error) {
	b.prepareWanted(ctx)
	release := func() {}
	if b.lockWrites != nil {
		var err error
		if release, err = b.lockWrites(ctx); err != nil {
			return nil, err
		}
	}
	tx, err := b.write.BeginTx(ctx, nil)
	if err != nil {
		release()
		return nil, err
	}
	return &sqliteTx{tx: tx, b: b, release: release}, nil
}

func (b *sqliteBackend) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	var rows *sql.Rows
	var err error
	if st := b.readStmt(ctx, query); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = b.read.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (b *sqliteBackend) QueryRow(ctx context.Context, query string, args ...any) Row {
	if st := b.readStmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return b.read.QueryRowContext(ctx, query, args...)
}

// readStmt returns query prepared on the read pool, preparing it the
// first time; nil when it does not prepare or maxStmts are kept already
// (the query then runs unprepared, and fails there with its error). It
// is used only when the read pool is not the write connection: preparing
// there would wait behind a batch.
func (b *sqliteBackend) readStmt(ctx context.Context, query string) *sql.Stmt {
	if b.read == b.write {
		return nil
	}
	b.mu.Lock()
	st, ok := b.reads[query]
	full := len(b.reads) >= maxStmts
	b.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := b.read.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if kept, dup := b.reads[query]; dup {
		_ = st.Close()
		return kept
	}
	if b.reads == nil {
		b.reads = make(map[string]*sql.Stmt)
	}
	b.reads[query] = st
	return st
}

func (b *sqliteBackend) Close() error {
	b.mu.Lock()
	var errs []error
	for _, st := range b.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range b.reads {
		errs = append(errs, st.Close())
	}
	b.stmts, b.reads = nil, nil
	b.mu.Unlock()
	if b.ownsWrite {
		errs = append(errs, b.write.Close())
	}
	return errors.Join(errs...)
}

// sqliteTx is a database/sql transaction. database/sql rolls it back by
// itself when the context given to BeginTx ends. SQLite runs in-process, so
// queued statements run at once; the first failure is kept for the runtime.
type sqliteTx struct {
	tx *sql.Tx
	b  *sqliteBackend
	// release gives back the store's write gate (it may be called more
	// than once).
	release func()
	// ctx is the context of the Apply running, for Queue.
	ctx    context.Context
	event  *Event
	failed *QueuedError
}

func (t *sqliteTx) Dialect() Dialect        { return SQLite }
func (t *sqliteTx) SQL(query string) string { return rewrite("", query) }

func (t *sqliteTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.failed != nil {
		return 0, t.failed
	}
	res, err := t.exec(ctx, query, args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// exec runs query in the transaction, through its prepared statement.
func (t *sqliteTx) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	st := t.b.stmt(query)
	if st == nil {
		return t.tx.ExecContext(ctx, query, args...)
	}
	// The write pool has one connection, on which st is prepared: the
	// transaction's statement reuses it.
	return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

func (t *sqliteTx) Queue(query string, args ...any) {
	if t.failed != nil {
		return
	}
	ctx := t.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if _, err := t.exec(ctx, query, args); err != nil {
		t.failed = &QueuedError{Event: t.event, Err: err}
	}
}

func (t *sqliteTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if t.failed != nil {
		return nil, t.failed
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (t *sqliteTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	if t.failed != nil {
		return errRow{t.failed}
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t *sqliteTx) Applying(ctx context.Context, ev *Event) error {
	t.ctx, t.event = ctx, ev
	if t.failed != nil {
		return t.failed
	}
	return nil
}

func (t *sqliteTx) Flush(context.Context) error {
	if t.failed != nil {
		return t.failed
	}
	return nil
}

func (t *sqliteTx) Commit(ctx context.Context) error {
	if err := t.Flush(ctx); err != nil {
		return err
	}
	defer t.release()
	return t.tx.Commit()
}

func (t *sqliteTx) Rollback() error {
	defer t.release()
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() error { return r.Rows.Close() }
