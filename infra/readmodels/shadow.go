package readmodels

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/projections"
)

// OpenShadow opens an empty database, beside store's, to rebuild the read
// model name into while the live one keeps answering (an online rebuild;
// projections.Replace copies the result over): a file next to an SQLite
// store's (its own file, so the rebuild never holds the store's write lock
// longer than a batch), a schema of its own in a PostgreSQL store's
// database. A leftover of an earlier rebuild is dropped first. drop closes
// and removes it. Its rebuilds count the events in live's log.
func OpenShadow(ctx context.Context, store eventstore.Store, live *projections.DB, name string) (db *projections.DB, drop func() error, err error) {
	switch s := store.(type) {
	case *sqlite.Store:
		path := s.Path() + ".rebuild-" + name
		if err := removeSQLite(path); err != nil {
			return nil, nil, err
		}
		// NORMAL: nothing of it needs to survive a crash (a rebuild starts over).
		write, err := sqlite.OpenRaw(path, sqlite.Options{Synchronous: "NORMAL"}, 1)
		if err != nil {
			return nil, nil, fmt.Errorf("readmodels: open the rebuild database: %w", err)
		}
		db := projections.NewSQLite(write, nil, projections.SQLiteOptions{CloseWrite: true})
		return db.WithLog(live), func() error { return errors.Join(db.Close(), removeSQLite(path)) }, nil
	case *postgres.Store:
		schema := s.Schema() + "_rebuild_" + strings.ReplaceAll(name, "-", "_")
		if len(schema) > 63 {
			return nil, nil, fmt.Errorf("readmodels: rebuild schema %q is longer than 63 bytes", schema)
		}
		dropSchema := func(ctx context.Context) error {
			_, err := s.Pool().Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			return err
		}
		if err := dropSchema(ctx); err != nil {
			return nil, nil, fmt.Errorf("readmodels: drop an earlier rebuild schema: %w", err)
		}
		if _, err := s.Pool().Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return nil, nil, fmt.Errorf("readmodels: create the rebuild schema: %w", err)
		}
		db, err := NewPostgres(s.Pool(), schema)
		if err != nil {
			return nil, nil, err
		}
		return db.WithLog(live), func() error { return dropSchema(context.WithoutCancel(ctx)) }, nil
	}
	return nil, nil, fmt.Errorf("readmodels: no rebuild database for an event store of type %T", store)
}

// removeSQLite removes an SQLite file and its WAL and shared-memory files.
func removeSQLite(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
