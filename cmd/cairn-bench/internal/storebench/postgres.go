package storebench

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresBaseline does raw INSERTs and scans in the store's database and
// schema, through pgx like the store itself.
type PostgresBaseline struct {
	pool   *pgxpool.Pool
	schema string
}

// NewPostgresBaseline connects to dsn for raw work in schema.
func NewPostgresBaseline(ctx context.Context, dsn, schema string, maxConns int32) (*PostgresBaseline, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if schema == "" {
		schema = "public"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &PostgresBaseline{pool: pool, schema: pgx.Identifier{schema}.Sanitize()}, nil
}

func (b *PostgresBaseline) table() string { return b.schema + ".raw_events" }

// Reset implements Baseline. The raw table has the store's columns (the
// appending transaction's id included, as the store records it) without
// its CHECK constraints or its append function.
func (b *PostgresBaseline) Reset(ctx context.Context) error {
	_, err := b.pool.Exec(ctx, `DROP TABLE IF EXISTS `+b.table()+`;
CREATE TABLE `+b.table()+` (
  position    bigserial PRIMARY KEY,
  tx_id       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id          uuid NOT NULL UNIQUE,
  stream      text NOT NULL,
  revision    bigint NOT NULL,
  type        text NOT NULL,
  version     int NOT NULL,
  data        bytea NOT NULL,
  metadata    bytea NOT NULL,
  recorded_at timestamptz NOT NULL,
  UNIQUE (stream, revision)
)`)
	return err
}

// Insert implements Baseline: one transaction; one INSERT statement for a
// single row, an unnest INSERT for several (what a batch append does).
func (b *PostgresBaseline) Insert(ctx context.Context, rows []Row) error {
	now := time.Now()
	if len(rows) == 1 {
		r := rows[0]
		_, err := b.pool.Exec(ctx, `INSERT INTO `+b.table()+` (id, stream, revision, type, version, data, metadata, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			r.ID, r.Stream, r.Revision, r.Type, r.Version, r.Data, r.Metadata, now)
		return err
	}
	ids := make([][16]byte, len(rows))
	streams := make([]string, len(rows))
	revs := make([]int64, len(rows))
	types := make([]string, len(rows))
	versions := make([]int32, len(rows))
	data := make([][]byte, len(rows))
	mds := make([][]byte, len(rows))
	for i, r := range rows {
		ids[i], streams[i], revs[i], types[i], versions[i], data[i], mds[i] = r.ID, r.Stream, r.Revision, r.Type, int32(r.Version), r.Data, r.Metadata
	}
	_, err := b.pool.Exec(ctx, `INSERT INTO `+b.table()+` (id, stream, revision, type, version, data, metadata, recorded_at)
SELECT i, s, r, t, v, d, m, $8 FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::bytea[], $7::bytea[]) AS u(i, s, r, t, v, d, m)`,
		ids, streams, revs, types, versions, data, mds, now)
	return err
}

// Scan implements Baseline with keyset pages.
func (b *PostgresBaseline) Scan(ctx context.Context, pageSize int) (int, error) {
	var after int64
	n := 0
	for {
		rows, err := b.pool.Query(ctx, `SELECT position, id, stream, revision, type, version, data, metadata, recorded_at FROM `+b.table()+` WHERE position > $1 ORDER BY position LIMIT $2`, after, pageSize)
		if err != nil {
			return n, err
		}
		got := 0
		var r Row
		var at time.Time
		for rows.Next() {
			if err := rows.Scan(&after, &r.ID, &r.Stream, &r.Revision, &r.Type, &r.Version, &r.Data, &r.Metadata, &at); err != nil {
				rows.Close()
				return n, err
			}
			got++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, err
		}
		n += got
		if got < pageSize {
			return n, nil
		}
	}
}

// Settle implements Settler: VACUUM ANALYZE the store's events and the raw
// table, so neither pays the first-read hint-bit cost during the timing.
func (b *PostgresBaseline) Settle(ctx context.Context) error {
	_, err := b.pool.Exec(ctx, `VACUUM ANALYZE `+b.schema+`.events, `+b.table())
	return err
}

// Close implements Baseline.
func (b *PostgresBaseline) Close() error {
	_, err := b.pool.Exec(context.Background(), `DROP TABLE IF EXISTS `+b.table())
	b.pool.Close()
	return err
}
