package readmodels

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/projections"
)

// Open opens the event store named by storeDSN and the read models'
// database beside it (the same SQLite file, or the store's PostgreSQL pool
// and schema). Closing the store closes both.
func Open(ctx context.Context, storeDSN string) (eventstore.Store, *projections.DB, error) {
	store, err := dsn.Open(ctx, storeDSN)
	if err != nil {
		return nil, nil, fmt.Errorf("open the event store: %w", err)
	}
	var db *projections.DB
	switch s := store.(type) {
	case *sqlite.Store:
		_, opts, perr := sqlite.ParseDSN(storeDSN)
		if perr != nil {
			err = perr
			break
		}
		db, err = OpenSQLite(s, opts)
	case *postgres.Store:
		db, err = NewPostgres(s.Pool(), s.Schema())
	default:
		err = fmt.Errorf("no read-model database for an event store of type %T", store)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open the read models' database: %w", joinClose(err, store.Close()))
	}
	return store, db, nil
}

// joinClose adds a close error to err, if any.
func joinClose(err, closeErr error) error {
	if closeErr != nil {
		return fmt.Errorf("%w (and closing: %v)", err, closeErr)
	}
	return err
}
