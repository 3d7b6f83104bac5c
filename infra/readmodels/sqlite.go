package readmodels

import (
	"fmt"

	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/projections"
)

// OpenSQLite opens the read models' database on the file of an SQLite event
// store. Projectors write through a connection of their own
// (store.OpenRaw: BEGIN IMMEDIATE, the store's busy timeout, and WAL
// checkpoints left to the store); each batch takes the store's write gate
// (store.LockWrites), so batches and appends take the write lock in turns
// instead of waiting in SQLite's busy back-off. Queries use the store's
// read-only pool (store.DB()), so they never wait for a writer.
//
// opts are the store's options. When opts.Synchronous is empty it is set to
// NORMAL rather than the store's FULL: a batch committed by a projector may
// then be lost on power failure, together with its checkpoint (both are in
// the same WAL commit), and is simply applied again; the events themselves
// keep the store's durability. Close the DB before the store.
func OpenSQLite(store *sqlite.Store, opts sqlite.Options) (*projections.DB, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "NORMAL"
	}
	write, err := store.OpenRaw(opts, 1)
	if err != nil {
		return nil, fmt.Errorf("projections: open sqlite writer: %w", err)
	}
	return projections.NewSQLite(write, store.DB(), projections.SQLiteOptions{
		CloseWrite: true,
		LockWrites: store.LockWrites,
		IsFull:     sqlite.IsFull,
	}), nil
}
