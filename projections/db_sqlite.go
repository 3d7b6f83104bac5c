package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// OpenSQLite opens the read models' database on the file of an SQLite event
// store. Projectors write through a connection of their own
// (sqlite.OpenRaw: BEGIN IMMEDIATE and the store's busy timeout, so a
// batch waits for the store's writer instead of failing); queries use the
// store's read-only pool (store.DB()), so they never wait for a writer.
//
// opts are the store's options. When opts.Synchronous is empty it is set to
// NORMAL rather than the store's FULL: a batch committed by a projector may
// then be lost on power failure, together with its checkpoint (both are in
// the same WAL commit), and is simply applied again; the events themselves
// keep the store's durability. Close the DB before the store.
func OpenSQLite(store *sqlite.Store, opts sqlite.Options) (*DB, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "NORMAL"
	}
	write, err := sqlite.OpenRaw(store.Path(), opts, 1)
	if err != nil {
		return nil, fmt.Errorf("projections: open sqlite writer: %w", err)
	}
	db := NewSQLite(write, store.DB())
	db.b.(*sqliteBackend).ownsWrite = true
	return db, nil
}

// NewSQLite builds a DB over handles the caller owns. write must be a
// single-connection pool whose transactions start with BEGIN IMMEDIATE
// (sqlite.OpenRaw with conns 1 gives one); read may be nil, in which case
// queries go through write too (and wait behind the batches).
func NewSQLite(write, read *sql.DB) *DB {
	if read == nil {
		read = write
	}
	return newDB(SQLite, "", &sqliteBackend{write: write, read: read})
}

type sqliteBackend struct {
	write, read *sql.DB
	ownsWrite   bool
}

func (b *sqliteBackend) begin(ctx context.Context) (txn, error) {
	tx, err := b.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqliteTx{tx: tx}, nil
}

func (b *sqliteBackend) query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := b.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (b *sqliteBackend) queryRow(ctx context.Context, query string, args ...any) Row {
	return b.read.QueryRowContext(ctx, query, args...)
}

func (b *sqliteBackend) close() error {
	if b.ownsWrite {
		return b.write.Close()
	}
	return nil
}

// sqliteTx is a database/sql transaction. database/sql rolls it back by
// itself when the context given to BeginTx ends. SQLite runs in-process, so
// queued statements run at once; the first failure is kept for the runtime.
type sqliteTx struct {
	tx *sql.Tx
	// ctx is the context of the Apply running, for Queue.
	ctx    context.Context
	event  *Event
	failed *queuedError
}

func (t *sqliteTx) Dialect() Dialect        { return SQLite }
func (t *sqliteTx) SQL(query string) string { return rewrite("", query) }

func (t *sqliteTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.failed != nil {
		return 0, t.failed
	}
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *sqliteTx) Queue(query string, args ...any) {
	if t.failed != nil {
		return
	}
	ctx := t.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if _, err := t.tx.ExecContext(ctx, query, args...); err != nil {
		t.failed = &queuedError{event: t.event, err: err}
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

func (t *sqliteTx) applying(ctx context.Context, ev *Event) error {
	t.ctx, t.event = ctx, ev
	if t.failed != nil {
		return t.failed
	}
	return nil
}

func (t *sqliteTx) flush(context.Context) error {
	if t.failed != nil {
		return t.failed
	}
	return nil
}

func (t *sqliteTx) commit(ctx context.Context) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	return t.tx.Commit()
}

func (t *sqliteTx) rollback() error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() error { return r.Rows.Close() }
