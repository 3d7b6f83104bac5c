package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/eventstore"
)

// checkpointDDL creates the table of every projection's checkpoint.
// position is the last event position whose effects are committed;
// schema_version counts the projection's migrations that ran.
var checkpointDDL = map[Dialect]string{
	SQLite: `CREATE TABLE IF NOT EXISTS {schema}.projection_checkpoints (
    name           TEXT    PRIMARY KEY,
    position       INTEGER NOT NULL CHECK (position >= 0),
    schema_version INTEGER NOT NULL CHECK (schema_version >= 0)
) STRICT`,
	Postgres: `CREATE TABLE IF NOT EXISTS {schema}.projection_checkpoints (
    name           text   PRIMARY KEY,
    position       bigint NOT NULL CHECK (position >= 0),
    schema_version int    NOT NULL CHECK (schema_version >= 0)
)`,
}

// checkpointSQL are the checkpoint statements, rewritten for one DB.
type checkpointSQL struct {
	create string
	insert string
	read   string
	// lock reads the row and, on PostgreSQL, locks it until the
	// transaction ends: every writer of a projection's tables takes it
	// first, so they serialise on it.
	lock      string
	setPos    string
	setSchema string
}

func newCheckpointSQL(db *DB) checkpointSQL {
	return checkpointSQL{
		create: db.SQL(checkpointDDL[db.dialect]),
		insert: db.SQL(`INSERT INTO {schema}.projection_checkpoints (name, position, schema_version)
VALUES ($1, 0, 0) ON CONFLICT (name) DO NOTHING`),
		read:      db.SQL(`SELECT position FROM {schema}.projection_checkpoints WHERE name = $1`),
		lock:      db.SQL(`SELECT position, schema_version FROM {schema}.projection_checkpoints WHERE name = $1` + db.dialect.lockSuffix()),
		setPos:    db.SQL(`UPDATE {schema}.projection_checkpoints SET position = $2 WHERE name = $1`),
		setSchema: db.SQL(`UPDATE {schema}.projection_checkpoints SET schema_version = $2 WHERE name = $1`),
	}
}

// checkpoint is a projection's row.
type checkpoint struct {
	position      uint64
	schemaVersion int
}

// Checkpoint returns the position stored for the projection name: 0 when
// it has no row yet. It fails if Setup never ran on db.
func Checkpoint(ctx context.Context, db *DB, name string) (uint64, error) {
	var pos int64
	err := db.QueryRow(ctx, db.cp.read, name).Scan(&pos)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("projections: %s: read checkpoint: %w", name, err)
	}
	return uint64(pos), nil
}

// Setup creates the checkpoint table and the projection's row if they are
// missing, and runs the projection's migrations that have not run yet, in
// one transaction. Projector.Run calls it; call it at start-up before
// serving queries on a read model whose projector may not have started.
func Setup(ctx context.Context, db *DB, p Projection) error {
	err := db.inTx(ctx, func(tx txn) error {
		if err := ensureCheckpoint(ctx, db, tx, p.Name()); err != nil {
			return err
		}
		cp, err := lockCheckpoint(ctx, db, tx, p.Name())
		if err != nil {
			return err
		}
		return migrate(ctx, db, tx, p, cp.schemaVersion)
	})
	if err != nil {
		return fmt.Errorf("projections: %s: setup: %w", p.Name(), err)
	}
	return nil
}

// migrate runs the projection's migrations after the first done, and
// records how many ran.
func migrate(ctx context.Context, db *DB, tx txn, p Projection, done int) error {
	ms := p.Migrations(db.dialect)
	if done > len(ms) {
		return fmt.Errorf("%d migrations ran, this build knows %d: the read model was written by a newer Cairn", done, len(ms))
	}
	if done == len(ms) {
		return nil
	}
	for i := done; i < len(ms); i++ {
		if _, err := tx.Exec(ctx, db.SQL(ms[i])); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	_, err := tx.Exec(ctx, db.cp.setSchema, p.Name(), len(ms))
	return err
}

// ensureCheckpoint creates the checkpoint table and the row of name.
// Concurrent set-ups on PostgreSQL serialise on an advisory lock, because
// CREATE TABLE IF NOT EXISTS is not safe against itself there.
func ensureCheckpoint(ctx context.Context, db *DB, tx txn, name string) error {
	if db.dialect == Postgres {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "cairn.projections:"+db.prefix); err != nil {
			return fmt.Errorf("take setup lock: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, db.cp.create); err != nil {
		return fmt.Errorf("create checkpoint table: %w", err)
	}
	if _, err := tx.Exec(ctx, db.cp.insert, name); err != nil {
		return fmt.Errorf("create checkpoint: %w", err)
	}
	return nil
}

// lockCheckpoint reads the row of name inside tx, locking it on
// PostgreSQL.
func lockCheckpoint(ctx context.Context, db *DB, tx txn, name string) (checkpoint, error) {
	var pos int64
	var version int
	if err := tx.QueryRow(ctx, db.cp.lock, name).Scan(&pos, &version); err != nil {
		return checkpoint{}, fmt.Errorf("read checkpoint: %w", err)
	}
	if pos < 0 {
		return checkpoint{}, fmt.Errorf("checkpoint is negative (%d)", pos)
	}
	return checkpoint{position: uint64(pos), schemaVersion: version}, nil
}

// inTx runs fn in a transaction and commits it, or rolls it back when fn
// or the commit fails.
func (db *DB) inTx(ctx context.Context, fn func(txn) error) (err error) {
	defer func() {
		// A full disk is the one failure every writer waits out rather
		// than stops on (KindUnavailable, eventstore.ErrStorageFull).
		if err != nil && db.b.IsFull(err) {
			err = eventstore.StorageFull("projections", err)
		}
	}()
	done := db.writes.begin()
	defer done()
	tx, err := db.begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
