package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnhq/cairn/eventstore"
)

var _ eventstore.Store = (*Store)(nil)

// cancelDeadlineDelay is how long a statement whose context ended may take
// to acknowledge the cancel request before its connection is closed.
const cancelDeadlineDelay = time.Second

// Store is the PostgreSQL event store. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	opts   Options
	sql    statements
	closed atomic.Bool
	// recent serves the head of $all to the subscriptions (nil when
	// Options.TailEvents is negative).
	recent *recent
	// allReads counts ReadAll's calls (tests: a subscription has polled).
	allReads atomic.Uint64

	// local wakes this Store's subscriptions; done ends them at Close.
	local *eventstore.Notifier
	done  chan struct{}

	// Background goroutines (NOTIFY sender, LISTEN connection) run on bg
	// and are waited for by Close.
	bg       context.Context
	bgCancel context.CancelFunc
	wg       sync.WaitGroup

	// mu orders starting the listener against Close.
	mu        sync.Mutex
	listening bool

	// kick (capacity 1) tells the NOTIFY sender that this Store appended.
	kick         chan struct{}
	channel      string
	instanceID   string
	listenConfig *pgx.ConnConfig
}

// statements are the store's SQL, qualified with its schema.
type statements struct {
	append     string
	appendOne  string
	appendMany string
	// The same appends fenced by an eventstore.Fence (migration 0006).
	appendFenced     string
	appendOneFenced  string
	appendManyFenced string
	storedIDs        string
	readAll          string
	forward          string
	backward         string
	exists           string
	head             string
}

func newStatements(schema string) statements {
	events := quoteIdent(schema) + ".events"
	const cols = eventColumns
	return statements{
		append: `SELECT out_status, out_revision, out_position, out_conflict_id FROM ` + quoteIdent(schema) +
			`.append_events($1, $2, $3, $4, $5, $6, $7)`,
		appendOne: `SELECT ` + quoteIdent(schema) + `.append_event_packed($1, $2, $3, $4, $5, $6, $7)`,
		appendMany: `SELECT out_status, out_revision, out_position, out_conflict_id FROM ` + quoteIdent(schema) +
			`.append_many($1, $2, $3, $4, $5, $6, $7, $8)`,
		appendFenced: `SELECT out_status, out_revision, out_position, out_conflict_id FROM ` + quoteIdent(schema) +
			`.append_events_fenced($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		appendOneFenced: `SELECT ` + quoteIdent(schema) + `.append_event_packed_fenced($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		appendManyFenced: `SELECT out_status, out_revision, out_position, out_conflict_id FROM ` + quoteIdent(schema) +
			`.append_many_fenced($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		storedIDs: `SELECT out_status, out_revision, out_position, out_conflict_id FROM ` + quoteIdent(schema) +
			`.stored_ids_status($1, $2)`,
		// The horizon and the rows come from the statement's one snapshot:
		// pg_current_snapshot() returns the active snapshot the scan uses.
		// Multiplying (not shifting) by 2^20 fails loudly on overflow.
		readAll: `SELECT ` + cols + ` FROM ` + events + `
 WHERE position > $1
   AND position < pg_snapshot_xmin(pg_current_snapshot())::text::bigint * 1048576
 ORDER BY position
 LIMIT $2`,
		forward:  `SELECT ` + cols + ` FROM ` + events + ` WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
		backward: `SELECT ` + cols + ` FROM ` + events + ` WHERE stream = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`,
		exists:   `SELECT EXISTS (SELECT 1 FROM ` + events + ` WHERE stream = $1)`,
		head:     `SELECT coalesce(max(position), 0) FROM ` + events,
	}
}

// Open connects to the database named by dsn (a PostgreSQL URL or key=value
// string, as pgx accepts), applies the migrations to opts.Schema and returns
// a ready Store.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("eventstore/postgres: parse dsn: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	// append_events relies on a fresh snapshot per statement; whatever the
	// server's or the DSN's default, the store's sessions are READ COMMITTED.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "cairn-eventstore"
	}
	listenConfig := cfg.ConnConfig.Copy()
	// A cancelled context cancels the statement on the server. pgx's default
	// only closes the socket, and the server then finishes the statement on
	// its own: an append whose caller gave up (say, while it waited for its
	// stream's lock) would still commit later.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelDeadlineDelay}
	}

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("eventstore/postgres: connect: %w", err)
	}
	if err := migrate(ctx, pool, opts.Schema, opts.Logger); err != nil {
		pool.Close()
		return nil, fmt.Errorf("eventstore/postgres: migrate schema %s: %w", opts.Schema, err)
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		pool.Close()
		return nil, fmt.Errorf("eventstore/postgres: instance id: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	s := &Store{
		pool:         pool,
		opts:         opts,
		sql:          newStatements(opts.Schema),
		recent:       newRecent(opts.TailEvents),
		local:        eventstore.NewNotifier(),
		done:         make(chan struct{}),
		bg:           bg,
		bgCancel:     cancel,
		kick:         make(chan struct{}, 1),
		channel:      channelName(opts.Schema),
		instanceID:   hex.EncodeToString(id[:]),
		listenConfig: listenConfig,
	}
	if !opts.DisableNotify {
		s.wg.Add(1)
		go s.runNotifySender(bg)
	}
	opts.Logger.Info("eventstore/postgres: opened", slog.Any("options", opts.logValue()))
	return s, nil
}

// Pool is the store's connection pool, for work on the same database such
// as benchmarks' raw baselines. Do not close it; Close the Store.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema is the schema holding the store's tables.
func (s *Store) Schema() string { return s.opts.Schema }

// Close ends subscriptions (with eventstore.ErrClosed), stops the background
// goroutines after sending a NOTIFY this Store still owed, and closes the
// pool once the operations in flight have returned their connections. Later
// calls return eventstore.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return eventstore.ErrClosed
	}
	s.closed.Store(true)
	close(s.done)
	s.bgCancel()
	s.mu.Unlock()
	s.wg.Wait()
	s.pool.Close()
	return nil
}
