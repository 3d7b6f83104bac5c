package readmodels

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/projections"
)

// OpenReadOnly opens the read models of the PostgreSQL event store named
// by storeDSN for a process that only reads them (the app proxy run on its
// own): a pool of its own whose sessions are read-only
// (default_transaction_read_only), so PostgreSQL itself refuses any write,
// and no migration runs. Closing the returned pool closes the DB. A SQLite
// store is refused: its file belongs to the one process that runs the
// projectors.
func OpenReadOnly(ctx context.Context, storeDSN string, maxConns int32) (*projections.DB, *pgxpool.Pool, error) {
	scheme, _, _ := strings.Cut(storeDSN, "://")
	if scheme != "postgres" && scheme != "postgresql" {
		return nil, nil, fmt.Errorf("read-only read models: want a postgres:// store, not %q", scheme+"://")
	}
	url, opts, err := dsn.ParsePostgres(storeDSN)
	if err != nil {
		return nil, nil, err
	}
	opts = opts.WithDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("read-only read models: parse dsn: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "cairn-read-only"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("read-only read models: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("read-only read models: connect: %w", err)
	}
	db, err := NewPostgres(pool, opts.Schema)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return db, pool, nil
}
