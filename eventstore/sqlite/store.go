package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/eventstore"

	sqlitedriver "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
)

const driverName = "sqlite"

// Store is the SQLite event store. It is safe for concurrent use.
type Store struct {
	path    string
	opts    Options
	log     *slog.Logger
	writeDB *sql.DB
	readDB  *sql.DB
	reads   *readStmts
	writer  *writer
	tail    *tail
	// databaseReads counts ReadAll's queries (tests: what the tail spared).
	databaseReads atomic.Uint64
	notifier      *eventstore.Notifier
	// gate orders this process's write transactions on the file (see
	// LockWrites).
	gate *gate
	// checkpoints copies the WAL back into the file (see checkpointer).
	checkpoints *checkpointer
	// done is closed by Close: it ends subscriptions.
	done chan struct{}

	// mu orders Close against Append's send to the writer: a send happens
	// under the read lock and only while closed is false, so once Close has
	// set it (under the write lock) no send can follow and the request
	// channel can be closed.
	mu     sync.RWMutex
	closed bool
	// isClosed mirrors closed for the lock-free checks of the read path.
	isClosed atomic.Bool
}

var _ eventstore.Store = (*Store)(nil)

// Open opens (creating it if needed, with its parent directory) the
// database file at path, brings its schema up to date and starts the
// writer. ctx bounds the opening only.
func Open(ctx context.Context, path string, opts Options) (_ *Store, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	if err := checkPath(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("eventstore/sqlite: database path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("eventstore/sqlite: create database directory: %w", err)
	}

	s := &Store{
		path:     abs,
		opts:     opts,
		log:      opts.Logger,
		notifier: eventstore.NewNotifier(),
		gate:     newGate(),
		done:     make(chan struct{}),
	}
	// cleanup releases what was opened so far when Open fails.
	var cleanup []func() error
	defer func() {
		if err != nil {
			for i := len(cleanup) - 1; i >= 0; i-- {
				err = errors.Join(err, cleanup[i]())
			}
		}
	}()

	s.writeDB, err = openDB(abs, opts, roleWriter, 1)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, s.writeDB.Close)
	wc := &writeConn{db: s.writeDB}
	if err := wc.connect(ctx, func(conn *sql.Conn) error {
		if err := enableWAL(ctx, conn); err != nil {
			return err
		}
		return migrate(ctx, conn, s.log)
	}); err != nil {
		return nil, err
	}
	cleanup = append(cleanup, wc.close)

	s.readDB, err = openDB(abs, opts, roleReader, opts.ReadConns)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, s.readDB.Close)
	if s.reads, err = prepareReads(ctx, s.readDB); err != nil {
		return nil, err
	}

	ckDB, err := openDB(abs, opts, roleCheckpointer, 1)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, ckDB.Close)
	s.checkpoints = newCheckpointer(ckDB, s.gate, opts.checkpoint, s.log)
	go s.checkpoints.run()

	s.tail = newTail(opts.TailEvents)
	s.writer = newWriter(wc, opts, s.notifier, s.tail, s.gate, s.checkpoints.poke, s.log)
	go s.writer.run()
	s.log.Info("eventstore/sqlite: opened", slog.String("path", abs), slog.Any("options", opts.logValue()))
	return s, nil
}

// openDB opens a database/sql handle on path whose connections get the
// pragmas of role, with a pool of at most conns connections kept open.
func openDB(path string, opts Options, role connRole, conns int) (*sql.DB, error) {
	c, err := sqlitedriver.NewConnector(driverDSN(path, opts, role))
	if err != nil {
		return nil, translate("open", err)
	}
	db := sql.OpenDB(persistWAL{c})
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// enableWAL switches the database file to WAL mode (persistent) and checks
// that SQLite accepted it: some file systems cannot do WAL.
func enableWAL(ctx context.Context, conn *sql.Conn) error {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return translate("enable WAL", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("eventstore/sqlite: journal mode is %q, not wal: the file system may not support WAL", mode)
	}
	return nil
}

// Full returns the error of the last append transaction if it failed
// because the disk is full (eventstore.ErrStorageFull), nil once a later
// one commits: a health signal. Reads work either way.
func (s *Store) Full() error {
	if err := s.writer.full.Load(); err != nil {
		return *err
	}
	return nil
}

// Path returns the absolute path of the database file. The benchmark
// harness opens its raw baseline on it (see OpenRaw).
func (s *Store) Path() string { return s.path }

// DB returns the store's read connection pool (read-only connections: every
// write fails). It serves measurements and diagnostics on the same database
// without going through the store; it is closed by Close.
func (s *Store) DB() *sql.DB { return s.readDB }

// Subscribe follows the global log from after: see eventstore.Store. The
// subscription ends with eventstore.ErrClosed when the store closes.
func (s *Store) Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error) {
	if s.isClosed.Load() {
		return nil, eventstore.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return eventstore.NewPollingSubscription(ctx, s, s.notifier, after, eventstore.PollOptions{Done: s.done}), nil
}

// Close refuses new appends, lets the writer apply the appends already
// queued (their callers get their real outcome), ends subscriptions and
// closes the database. Calls after the first return nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.isClosed.Store(true)
	close(s.done)
	close(s.writer.requests)
	s.mu.Unlock()

	<-s.writer.stopped
	s.checkpoints.stop()
	err := errors.Join(
		s.checkpoints.db.Close(),
		s.reads.close(),
		s.readDB.Close(),
		s.writer.conn.close(),
		s.writeDB.Close(),
	)
	if err != nil {
		return fmt.Errorf("eventstore/sqlite: close: %w", err)
	}
	s.log.Info("eventstore/sqlite: closed", slog.String("path", s.path))
	return nil
}
