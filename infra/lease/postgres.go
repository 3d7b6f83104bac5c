package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Defaults of Postgres.
const (
	DefaultCheckEvery  = time.Second
	DefaultPingTimeout = 2 * time.Second
)

// Postgres is a lease held as a session-level advisory lock on a dedicated
// connection to the store's database.
type Postgres struct {
	cfg        *pgx.ConnConfig
	name       string
	checkEvery time.Duration
	timeout    time.Duration
}

var _ Lease = (*Postgres)(nil)

// PostgresOptions configure a Postgres lease.
type PostgresOptions struct {
	// CheckEvery is how often the holder pings its connection, and how
	// often a follower tries to take the lease (default 1s).
	CheckEvery time.Duration
	// PingTimeout bounds one ping (default 2s): a leader whose ping fails
	// or times out gives the lease up.
	PingTimeout time.Duration
}

// NewPostgres returns the lease name (e.g. "scheduler/<schema>") in the
// database of dsn.
func NewPostgres(dsn, name string, opts PostgresOptions) (*Postgres, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	if opts.CheckEvery <= 0 {
		opts.CheckEvery = DefaultCheckEvery
	}
	if opts.PingTimeout <= 0 {
		opts.PingTimeout = DefaultPingTimeout
	}
	return &Postgres{cfg: cfg, name: name, checkEvery: opts.CheckEvery, timeout: opts.PingTimeout}, nil
}

// Acquire implements Lease.
func (l *Postgres) Acquire(ctx context.Context) (context.Context, func(), error) {
	for {
		conn, ok, err := l.try(ctx)
		if err != nil && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if ok {
			return l.hold(ctx, conn)
		}
		// Not taken (or the database is unreachable): try again later.
		t := time.NewTimer(l.checkEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
}

// try connects and tries the lock once; the connection is kept only when
// the lock is taken.
func (l *Postgres) try(ctx context.Context) (*pgx.Conn, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, l.cfg)
	if err != nil {
		return nil, false, err
	}
	var ok bool
	if err := conn.QueryRow(cctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, "cairn.lease/"+l.name).Scan(&ok); err != nil || !ok {
		conn.Close(context.Background())
		return nil, false, err
	}
	return conn, true, nil
}

// hold pings the connection until a ping fails (the lease is lost) or the
// lease is released.
func (l *Postgres) hold(ctx context.Context, conn *pgx.Conn) (context.Context, func(), error) {
	held, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(l.checkEvery)
		defer t.Stop()
		for {
			select {
			case <-held.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(held, l.timeout)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				cancel() // lost: the lock may be someone else's already
				return
			}
		}
	}()
	release := func() {
		cancel()
		<-done
		// Closing the session releases the advisory lock.
		cctx, ccancel := context.WithTimeout(context.Background(), l.timeout)
		defer ccancel()
		conn.Close(cctx)
	}
	return held, release, nil
}
