package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// schemaPlaceholder is replaced by the quoted schema name in migrations.
const schemaPlaceholder = "{schema}"

// migration is one numbered file of migrations/.
type migration struct {
	version int
	name    string
	// body is the file as written, with the schema placeholder; checksum is
	// over body, so it does not depend on the schema.
	body     string
	checksum string
}

var migrationFile = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded migrations in version order and checks
// that they are numbered 1, 2, 3... without gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		version, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("migration file %q: %w", e.Name(), err)
		}
		if version != len(out)+1 {
			return nil, fmt.Errorf("migration file %q: want version %d", e.Name(), len(out)+1)
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		out = append(out, migration{version: version, name: m[2], body: string(body), checksum: hex.EncodeToString(sum[:])})
	}
	return out, nil
}

// migrationLockKey names the advisory lock held while migrating schema. It
// is taken with pg_advisory_xact_lock, so it is released at commit.
func migrationLockKey(schema string) string {
	return "cairn/eventstore/postgres/migrate/" + schema
}

// migrate brings schema up to date in one transaction, under an advisory
// lock so concurrent Opens apply each migration once.
func migrate(ctx context.Context, db beginner, schema string, log *slog.Logger) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	if err := applyMigrations(ctx, tx, ms, schema, log); err != nil {
		if rbErr := tx.Rollback(ctx); rbErr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	return tx.Commit(ctx)
}

// beginner is what migrate needs from a pool.
type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

func applyMigrations(ctx context.Context, tx pgx.Tx, ms []migration, schema string, log *slog.Logger) error {
	q := quoteIdent(schema)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, migrationLockKey(schema)); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	// Create the schema only if it is missing: CREATE SCHEMA IF NOT EXISTS
	// would need the CREATE privilege on the database even when it exists.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		return fmt.Errorf("look up schema: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+q); err != nil {
			return fmt.Errorf("create schema %s: %w", q, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+q+`.schema_migrations (
    version    int         PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	applied := make(map[int]string) // version -> checksum
	rows, err := tx.Query(ctx, `SELECT version, checksum FROM `+q+`.schema_migrations`)
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	var version int
	var checksum string
	if _, err := pgx.ForEachRow(rows, []any{&version, &checksum}, func() error {
		applied[version] = checksum
		return nil
	}); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}

	for v := range applied {
		if v > len(ms) {
			return fmt.Errorf("schema %s has migration %d, this build knows %d: it was migrated by a newer Cairn", q, v, len(ms))
		}
	}
	for _, m := range ms {
		if sum, ok := applied[m.version]; ok {
			if sum != m.checksum {
				return fmt.Errorf("schema %s: migration %04d_%s was applied with a different content (checksum %s, this build has %s)", q, m.version, m.name, sum, m.checksum)
			}
			continue
		}
		if _, err := tx.Exec(ctx, strings.ReplaceAll(m.body, schemaPlaceholder, q)); err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+q+`.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`, m.version, m.name, m.checksum); err != nil {
			return fmt.Errorf("record migration %04d_%s: %w", m.version, m.name, err)
		}
		log.Info("eventstore/postgres: applied migration", slog.String("schema", schema), slog.Int("version", m.version), slog.String("name", m.name))
	}
	return nil
}

// quoteIdent quotes a schema or table name for SQL.
func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }
