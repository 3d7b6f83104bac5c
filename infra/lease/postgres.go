package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cairnhq/cairn/eventstore"
)

// Defaults of PostgresOptions.
const (
	// DefaultTTL is how long a lease lasts without renewal: a follower
	// takes over at most about DefaultTTL + its retry period after the
	// leader stopped renewing.
	DefaultTTL = 5 * time.Second
	// DefaultSchema is the event store's default schema.
	DefaultSchema = "public"
)

// Why a held lease's context ends (context.Cause of the held context),
// besides the parent context ending or release.
var (
	// ErrExpired: no renewal succeeded before the holder's local deadline;
	// it stepped down before the lease could expire in the database.
	ErrExpired = errors.New("lease: not renewed before the local deadline: stepped down")
	// ErrTaken: a renewal found the lease held by another holder or epoch.
	ErrTaken = errors.New("lease: taken over by another holder")
	// errReleased is the cause once the holder released the lease.
	errReleased = errors.New("lease: released")
)

// PostgresOptions configure a Postgres lease.
type PostgresOptions struct {
	// Schema is the event store's schema, which holds the leases table
	// (migration 0006 of eventstore/postgres; default "public").
	Schema string
	// TTL is how long the lease lasts past its last renewal, on the
	// database's clock (default DefaultTTL).
	TTL time.Duration
	// RenewEvery is how often the holder renews, and how often a follower
	// tries to take the lease (default TTL/3).
	RenewEvery time.Duration
	// Margin is how long before the end of the TTL, counted on the
	// holder's monotonic clock from the start of its last successful
	// renewal, the holder gives the lease up when it could not renew
	// (default TTL/5): it stops leading before anyone may take over.
	Margin time.Duration
	// Holder names this process in the leases table (default NewHolder();
	// two processes must never share one).
	Holder string
	// Metrics, if set, records this lease (held, epoch, failed renewals).
	Metrics *Metrics
	// Logger (default slog.Default()).
	Logger *slog.Logger
}

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// WithDefaults fills in the defaults.
func (o PostgresOptions) WithDefaults() PostgresOptions {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.RenewEvery == 0 {
		o.RenewEvery = o.TTL / 3
	}
	if o.Margin == 0 {
		o.Margin = o.TTL / 5
	}
	if o.Holder == "" {
		o.Holder = NewHolder()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every problem of o (after WithDefaults) at once.
func (o PostgresOptions) Validate() error {
	var errs []error
	if !schemaName.MatchString(o.Schema) {
		errs = append(errs, fmt.Errorf("schema %q: must be letters, digits and '_'", o.Schema))
	}
	if o.TTL < time.Millisecond {
		errs = append(errs, fmt.Errorf("ttl %s: must be at least 1ms", o.TTL))
	}
	if o.Margin <= 0 || o.Margin >= o.TTL {
		errs = append(errs, fmt.Errorf("margin %s: must be positive and below the ttl %s", o.Margin, o.TTL))
	}
	if o.RenewEvery <= 0 || o.RenewEvery >= o.TTL-o.Margin {
		errs = append(errs, fmt.Errorf("renew every %s: must be positive and below ttl - margin (%s), or no renewal comes before the holder's deadline", o.RenewEvery, o.TTL-o.Margin))
	}
	if o.Holder == "" {
		errs = append(errs, errors.New("holder: empty"))
	}
	return errors.Join(errs...)
}

// NewHolder returns a holder name unique to this process and call: host
// name, process id and a random suffix. A process that takes several
// leases may use one for all.
func NewHolder() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// Postgres is a lease held as a row of the event store's leases table,
// renewed by its holder, with an epoch that fences the holder's appends
// (see the package documentation).
type Postgres struct {
	cfg  *pgx.ConnConfig
	name string
	opts PostgresOptions
	sql  leaseSQL
	log  *slog.Logger
}

var _ Lease = (*Postgres)(nil)

type leaseSQL struct{ acquire, renew, release, list string }

func newLeaseSQL(schema string) leaseSQL {
	q := pgx.Identifier{schema}.Sanitize()
	return leaseSQL{
		acquire: `SELECT out_acquired, out_holder, out_epoch, out_expires_at - out_now FROM ` + q + `.lease_acquire($1, $2, $3)`,
		renew:   `SELECT ` + q + `.lease_renew($1, $2, $3, $4)`,
		release: `SELECT ` + q + `.lease_release($1, $2, $3)`,
		list:    `SELECT name, holder, epoch, acquired_at, renewed_at, expires_at, expires_at > clock_timestamp() FROM ` + q + `.leases ORDER BY name`,
	}
}

// NewPostgres returns the lease name in the database of dsn, whose
// opts.Schema the event store has migrated.
func NewPostgres(dsn, name string, opts PostgresOptions) (*Postgres, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "cairn-lease"
	}
	// A statement whose context ends is cancelled on the server too (pgx's
	// default only closes the socket, and the server would finish it): a
	// renewal stuck behind a lock must not commit after the holder stepped
	// down, extending a lease nobody leads under. statement_timeout is the
	// backstop when the cancel request is lost.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(max((opts.TTL-opts.Margin).Milliseconds(), 1), 10)
	return &Postgres{cfg: cfg, name: name, opts: opts, sql: newLeaseSQL(opts.Schema),
		log: opts.Logger.With(slog.String("lease", name), slog.String("holder", opts.Holder))}, nil
}

// Holder is this process's name in the leases table.
func (l *Postgres) Holder() string { return l.opts.Holder }

// Acquire implements Lease: it tries every RenewEvery, or as soon as the
// holder's lease expires when that comes first, until it gets the lease.
// The held context carries the lease's eventstore.Fence, so the appends
// the leader makes with it are refused once the lease moved on.
func (l *Postgres) Acquire(ctx context.Context) (context.Context, func(), error) {
	l.opts.Metrics.following(l.name)
	var conn *pgx.Conn
	failing := false
	for {
		start := time.Now()
		var try attempt
		var err error
		conn, try, err = l.tryAcquire(ctx, conn)
		if try.ok {
			l.log.Info("lease: taken", slog.Int64("epoch", try.epoch))
			l.opts.Metrics.taken(l.name, try.epoch)
			return l.hold(ctx, conn, try.epoch, start)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			// Once per outage: followers try again every RenewEvery.
			l.log.Warn("lease: cannot try to take the lease; trying again", slog.Any("error", err))
			failing = true
		case err != nil && ctx.Err() == nil:
			l.log.Debug("lease: cannot try to take the lease", slog.Any("error", err))
		case err == nil && failing:
			l.log.Info("lease: the database answers again; following")
			failing = false
		}
		wait := l.opts.RenewEvery
		if err == nil {
			// Just past the expiry, on the database's clock.
			wait = min(wait, max(try.expiresIn, 0)+time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			closeConn(conn)
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
}

// attempt is the answer of one try.
type attempt struct {
	ok    bool
	epoch int64
	// expiresIn is how long the lease has left, on the database's clock.
	expiresIn time.Duration
}

// tryAcquire tries once, connecting first if conn is nil; it returns the
// connection to use next (nil after an error).
func (l *Postgres) tryAcquire(ctx context.Context, conn *pgx.Conn) (*pgx.Conn, attempt, error) {
	// Generous: an attempt whose answer is lost may still have taken the
	// lease (the next attempt gets it again, at a new epoch), and until
	// then the lease stays unled.
	actx, cancel := context.WithTimeout(ctx, l.opts.TTL)
	defer cancel()
	if conn == nil {
		var err error
		if conn, err = pgx.ConnectConfig(actx, l.cfg); err != nil {
			return nil, attempt{}, err
		}
	}
	var a attempt
	var holder string
	if err := conn.QueryRow(actx, l.sql.acquire, l.name, l.opts.Holder, l.opts.TTL).Scan(&a.ok, &holder, &a.epoch, &a.expiresIn); err != nil {
		closeConn(conn)
		return nil, attempt{}, err
	}
	return conn, a, nil
}

// hold renews the lease every RenewEvery until it is released, taken over,
// or not renewed before the local deadline (start of the last successful
// renewal + TTL - Margin, on the monotonic clock), which cancels the held
// context: the holder stops leading before the database lets anyone else
// take the lease, as long as its clock runs at the database's pace; a
// holder that was paused past it (SIGSTOP) wakes with its deadline passed,
// and its appends in the meantime are refused by the fence.
func (l *Postgres) hold(ctx context.Context, conn *pgx.Conn, epoch int64, start time.Time) (context.Context, func(), error) {
	held, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	// conn is the renewer's until done is closed, then release's.
	go func() {
		defer close(done)
		conn = l.renew(held, cancel, conn, epoch, start)
	}()
	release := func() {
		cancel(errReleased)
		<-done
		l.opts.Metrics.following(l.name)
		// Let the lease expire now, so a follower need not wait out the
		// TTL; harmless when it is someone else's already.
		rctx, rcancel := context.WithTimeout(context.Background(), l.opts.RenewEvery)
		defer rcancel()
		if conn == nil {
			c, err := pgx.ConnectConfig(rctx, l.cfg)
			if err != nil {
				l.log.Warn("lease: cannot release (it expires on its own)", slog.Any("error", err))
				return
			}
			conn = c
		}
		var released bool
		if err := conn.QueryRow(rctx, l.sql.release, l.name, l.opts.Holder, epoch).Scan(&released); err != nil {
			l.log.Warn("lease: cannot release (it expires on its own)", slog.Any("error", err))
		}
		closeConn(conn)
	}
	return eventstore.WithFence(held, eventstore.Fence{Lease: l.name, Epoch: epoch}), release, nil
}

// renew is the holder's loop; it returns the connection left (nil when
// the last one failed).
func (l *Postgres) renew(held context.Context, cancel context.CancelCauseFunc, conn *pgx.Conn, epoch int64, start time.Time) *pgx.Conn {
	deadline := start.Add(l.opts.TTL - l.opts.Margin)
	next := start.Add(l.opts.RenewEvery)
	for {
		t := time.NewTimer(time.Until(minTime(next, deadline)))
		select {
		case <-held.Done():
			t.Stop()
			return conn
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			l.stepDown(cancel, ErrExpired, "expired", epoch)
			return conn
		}
		began := time.Now()
		var expires pgtype.Timestamptz
		var err error
		conn, expires, err = l.renewOnce(held, conn, epoch, deadline)
		switch {
		case err == nil && expires.Valid:
			deadline = began.Add(l.opts.TTL - l.opts.Margin)
			next = began.Add(l.opts.RenewEvery)
		case err == nil:
			l.stepDown(cancel, ErrTaken, "taken", epoch)
			return conn
		case held.Err() != nil:
			return conn
		default:
			l.opts.Metrics.renewalFailed(l.name)
			l.log.Warn("lease: renewal failed; retrying until the local deadline", slog.Int64("epoch", epoch),
				slog.Duration("left", time.Until(deadline)), slog.Any("error", err))
			// Try again soon, but never in a busy loop.
			next = time.Now().Add(l.opts.RenewEvery / 4)
		}
	}
}

// renewOnce renews once, bounded by the local deadline; a NULL expiry
// means the lease is someone else's.
func (l *Postgres) renewOnce(ctx context.Context, conn *pgx.Conn, epoch int64, deadline time.Time) (*pgx.Conn, pgtype.Timestamptz, error) {
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var expires pgtype.Timestamptz
	if conn == nil {
		var err error
		if conn, err = pgx.ConnectConfig(rctx, l.cfg); err != nil {
			return nil, expires, err
		}
	}
	if err := conn.QueryRow(rctx, l.sql.renew, l.name, l.opts.Holder, epoch, l.opts.TTL).Scan(&expires); err != nil {
		closeConn(conn)
		return nil, expires, err
	}
	return conn, expires, nil
}

func (l *Postgres) stepDown(cancel context.CancelCauseFunc, cause error, reason string, epoch int64) {
	l.log.Warn("lease: stepping down", slog.Int64("epoch", epoch), slog.String("reason", reason))
	l.opts.Metrics.steppedDown(l.name, reason)
	l.opts.Metrics.following(l.name)
	cancel(cause)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// closeConn closes conn (nil-safe), bounded in time: it is being given up.
func closeConn(conn *pgx.Conn) {
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx) // the connection is discarded either way
}

// State is one lease as the leases table holds it.
type State struct {
	Name       string    `json:"name"`
	Holder     string    `json:"holder"`
	Epoch      int64     `json:"epoch"`
	AcquiredAt time.Time `json:"acquired_at"`
	RenewedAt  time.Time `json:"renewed_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	// Live: not expired on the database's clock.
	Live bool `json:"live"`
}

// Querier is what List needs of a connection or pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// List returns every lease of the event store's schema, by name.
func List(ctx context.Context, db Querier, schema string) ([]State, error) {
	rows, err := db.Query(ctx, newLeaseSQL(schema).list)
	if err != nil {
		return nil, fmt.Errorf("lease: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (State, error) {
		var s State
		err := r.Scan(&s.Name, &s.Holder, &s.Epoch, &s.AcquiredAt, &s.RenewedAt, &s.ExpiresAt, &s.Live)
		s.AcquiredAt, s.RenewedAt, s.ExpiresAt = s.AcquiredAt.UTC(), s.RenewedAt.UTC(), s.ExpiresAt.UTC()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("lease: list: %w", err)
	}
	return out, nil
}
