package projections

import (
	"context"
	"strings"
	"sync/atomic"
)

// Querier runs read statements. A DB and a Tx are both Queriers, so query
// functions work inside and outside a batch.
type Querier interface {
	// Dialect is the database's dialect.
	Dialect() Dialect
	// SQL rewrites query for this database: see DB.SQL.
	SQL(query string) string
	// Query runs a statement that returns rows. Close the rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement that returns at most one row. Scan reports
	// a missing row with an error matching sql.ErrNoRows (pgx's ErrNoRows
	// does too).
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Tx is the transaction of one batch, as Apply sees it. Statements use $N
// placeholders and "{schema}." table prefixes already rewritten by SQL.
type Tx interface {
	Querier
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Queue adds a write whose result the caller does not need. Queued
	// statements run in order, before the transaction's next Exec, Query
	// or QueryRow and before the commit, so reads see them. On PostgreSQL
	// they go to the server together (a pipeline: one round trip for many
	// events); on SQLite Queue runs the statement at once. A queued
	// statement that fails fails the batch, and the error names the event
	// whose Apply queued it.
	Queue(query string, args ...any)
}

// Rows is a result set: both drivers' rows behind one interface.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	// Err is the error that ended the iteration, if any.
	Err() error
	Close() error
}

// Row is a single-row result.
type Row interface {
	Scan(dest ...any) error
}

// errRow is a Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Backend is what a DB delegates to, one per database: NewSQLite builds
// SQLite's (database/sql); infra/readmodels.NewPostgres builds
// PostgreSQL's (pgx, with pipelined queues). Statements use $N
// placeholders and "{schema}." prefixes already rewritten by DB.SQL.
type Backend interface {
	// Begin starts the write transaction of a batch.
	Begin(ctx context.Context) (BackendTx, error)
	// Query and QueryRow run reads outside any batch.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Close releases what the backend opened; handles the caller passed in
	// stay open.
	Close() error
	// IsFull reports whether err is the database's own "disk full" error
	// (by its code).
	IsFull(err error) bool
}

// BackendTx is a Backend's transaction as the runtime drives it.
type BackendTx interface {
	Tx
	// Applying tells which event (and context) the next queued statements
	// belong to (nil outside Apply), and returns the error of a statement
	// queued earlier that already failed, if any.
	Applying(ctx context.Context, ev *Event) error
	// Flush runs the queued statements; the failure of one is a
	// *QueuedError.
	Flush(ctx context.Context) error
	// Commit flushes, then commits.
	Commit(ctx context.Context) error
	// Rollback ends the transaction if it is still open; it is safe to call
	// after Commit.
	Rollback() error
}

// txn is the short name the runtime uses.
type txn = BackendTx

// QueuedError is the failure of a queued statement: the event whose Apply
// queued it, if any, and the cause.
type QueuedError struct {
	Event *Event
	Err   error
}

func (e *QueuedError) Error() string { return "queued statement: " + e.Err.Error() }
func (e *QueuedError) Unwrap() error { return e.Err }

// DB is the database the read models live in, for one dialect: the
// projectors write to it and the query functions read from it. Build it
// with NewSQLite, or NewDB over another Backend (infra/readmodels opens
// one beside an event store, on SQLite or PostgreSQL). It is safe for concurrent use.
type DB struct {
	dialect Dialect
	// prefix replaces "{schema}." in statements: "" on SQLite, the quoted
	// schema and a dot on PostgreSQL.
	prefix string
	b      Backend
	// cp are the checkpoint statements for this database.
	cp checkpointSQL
	// log, when set, is the database whose events table rebuilds count
	// (WithLog); nil: this one.
	log *DB
	// reads counts the statements run by Query and QueryRow (see Reads);
	// copies made by WithLog share it.
	reads *atomic.Uint64
	// writes tells readers when the tables may have changed (see
	// Version); copies made by WithLog share it.
	writes *writeVersion
}

// takesTurns reports whether write transactions take turns with the event
// store's writer (an SQLite DB given SQLiteOptions.LockWrites).
func (db *DB) takesTurns() bool {
	b, ok := db.b.(*sqliteBackend)
	return ok && b.takesTurns()
}

// NewDB builds a DB over a backend of dialect; prefix replaces "{schema}."
// in statements ("" on SQLite, the quoted schema and a dot on PostgreSQL).
func NewDB(dialect Dialect, prefix string, b Backend) *DB {
	db := &DB{dialect: dialect, prefix: prefix, b: b, reads: new(atomic.Uint64), writes: new(writeVersion)}
	db.cp = newCheckpointSQL(db)
	return db
}

// Dialect is the database's dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQL returns query with every "{schema}." placeholder replaced by the
// qualifier of the read models' tables: removed on SQLite, the quoted
// schema (the event store's) on PostgreSQL. Read models rewrite their
// statements once, when they are built.
func (db *DB) SQL(query string) string { return rewrite(db.prefix, query) }

// rewrite replaces every "{schema}." in query by prefix.
func rewrite(prefix, query string) string {
	return strings.ReplaceAll(query, "{schema}.", prefix)
}

// Query runs a read statement outside any batch.
func (db *DB) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	db.reads.Add(1)
	return db.b.Query(ctx, query, args...)
}

// QueryRow runs a single-row read statement outside any batch.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) Row {
	db.reads.Add(1)
	return db.b.QueryRow(ctx, query, args...)
}

// Reads is how many read statements ran outside batches (Query and
// QueryRow: the queries of the read side, and the projectors' checkpoint
// reads) since the DB was built. It lets a benchmark count the queries an
// API request costs; the statements of a batch are not counted.
func (db *DB) Reads() uint64 { return db.reads.Load() }

// Close releases the prepared statements, and the SQLite write connection
// when SQLiteOptions.CloseWrite says it is the DB's; other handles stay
// open.
func (db *DB) Close() error { return db.b.Close() }

func (db *DB) begin(ctx context.Context) (txn, error) { return db.b.Begin(ctx) }

var _ Querier = (*DB)(nil)
