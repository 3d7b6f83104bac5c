package storebench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// SQLiteBaseline does raw INSERTs and scans on the SQLite file the store
// uses, with the same journal mode and synchronous setting, through
// database/sql like the store itself.
type SQLiteBaseline struct {
	db *sql.DB
}

// NewSQLiteBaseline opens path (the store's database file) for raw work.
func NewSQLiteBaseline(path, synchronous string) (*SQLiteBaseline, error) {
	if synchronous == "" {
		synchronous = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	// SQLite has one writer at a time; a pool larger than one would only
	// add busy retries to the raw numbers.
	db.SetMaxOpenConns(1)
	return &SQLiteBaseline{db: db}, nil
}

// Reset implements Baseline.
func (b *SQLiteBaseline) Reset(ctx context.Context) error {
	_, err := b.db.ExecContext(ctx, `DROP TABLE IF EXISTS raw_events;
CREATE TABLE raw_events (
  position    INTEGER PRIMARY KEY,
  id          BLOB NOT NULL UNIQUE,
  stream      TEXT NOT NULL,
  revision    INTEGER NOT NULL,
  type        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  data        BLOB NOT NULL,
  metadata    BLOB NOT NULL,
  recorded_at INTEGER NOT NULL,
  UNIQUE (stream, revision)
)`)
	return err
}

// Insert implements Baseline: one transaction; one INSERT statement with a
// VALUES row per event (what a batch append boils down to).
func (b *SQLiteBaseline) Insert(ctx context.Context, rows []Row) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	now := time.Now().UnixMicro()
	var q strings.Builder
	q.WriteString(`INSERT INTO raw_events (id, stream, revision, type, version, data, metadata, recorded_at) VALUES `)
	args := make([]any, 0, len(rows)*8)
	for i, r := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, r.ID[:], r.Stream, r.Revision, r.Type, r.Version, r.Data, r.Metadata, now)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return err
	}
	return tx.Commit()
}

// Scan implements Baseline with keyset pages.
func (b *SQLiteBaseline) Scan(ctx context.Context, pageSize int) (int, error) {
	var after int64
	n := 0
	for {
		rows, err := b.db.QueryContext(ctx, `SELECT position, id, stream, revision, type, version, data, metadata, recorded_at FROM raw_events WHERE position > ? ORDER BY position LIMIT ?`, after, pageSize)
		if err != nil {
			return n, err
		}
		got := 0
		for rows.Next() {
			var r Row
			var id, data, md []byte
			var at int64
			if err := rows.Scan(&after, &id, &r.Stream, &r.Revision, &r.Type, &r.Version, &data, &md, &at); err != nil {
				rows.Close()
				return n, err
			}
			r.Data = append([]byte(nil), data...)
			r.Metadata = append([]byte(nil), md...)
			got++
		}
		if err := rows.Close(); err != nil {
			return n, err
		}
		if err := rows.Err(); err != nil {
			return n, err
		}
		n += got
		if got < pageSize {
			return n, nil
		}
	}
}

// Close implements Baseline.
func (b *SQLiteBaseline) Close() error {
	if _, err := b.db.Exec(`DROP TABLE IF EXISTS raw_events`); err != nil {
		b.db.Close()
		return fmt.Errorf("drop raw_events: %w", err)
	}
	return b.db.Close()
}
