package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"time"
)

// migrationFiles are the schema migrations, named NNNN_description.sql and
// applied in order. Add a new file to change the schema; never edit one
// that has shipped.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations, checked to be numbered 1..n.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	out := make([]migration, 0, len(entries))
	for _, e := range entries { // ReadDir sorts by name
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version != len(out)+1 {
			return nil, fmt.Errorf("eventstore/sqlite: migration %q: want a name like %04d_description.sql", e.Name(), len(out)+1)
		}
		body, err := fs.ReadFile(migrationFiles, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: version, name: name, sql: string(body)})
	}
	return out, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
) STRICT`

// migrate brings the schema up to date in one transaction on conn, the
// write connection. It refuses a database that a newer version migrated.
func migrate(ctx context.Context, conn *sql.Conn, log *slog.Logger) (err error) {
	all, err := migrations()
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see driverDSN)
	if err != nil {
		return translate("begin migration", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	if _, err := tx.ExecContext(ctx, createMigrationsTable); err != nil {
		return translate("create schema_migrations", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return translate("read schema version", err)
	}
	if current > len(all) {
		return fmt.Errorf("%w: version %d, this build knows up to %d: upgrade Cairn", ErrSchemaTooNew, current, len(all))
	}
	for _, m := range all[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return translate(fmt.Sprintf("migration %04d_%s", m.version, m.name), err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return translate("record migration", err)
		}
		log.Info("eventstore/sqlite: applied migration", slog.Int("version", m.version), slog.String("name", m.name))
	}
	if err := tx.Commit(); err != nil {
		return translate("commit migration", err)
	}
	return nil
}

// ignoreDone drops sql.ErrTxDone, which Rollback returns when the
// transaction already ended.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
