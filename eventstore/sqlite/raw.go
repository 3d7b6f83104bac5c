package sqlite

import (
	"database/sql"
)

// OpenRaw opens a writable database/sql handle on the database file at path
// (normally Store.Path) with the same settings as the store's write
// connection: the synchronous mode and busy timeout of opts, and BEGIN
// IMMEDIATE transactions, so concurrent writers wait for the write lock
// instead of failing with SQLITE_BUSY. The projections write their read
// models through it (same file, same WAL), and benchmarks use it for raw
// baselines. The pool holds at most conns connections; the caller closes
// the handle.
func OpenRaw(path string, opts Options, conns int) (*sql.DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	return openDB(path, opts.WithDefaults(), roleRaw, max(conns, 1))
}

// OpenRaw is the package's OpenRaw for a process that runs the store: its
// connections leave the WAL's checkpoints to the store (which runs them
// on a connection of its own, beside the writes), so transactions on it
// must hold LockWrites, whose release tells the store that something was
// committed. The store must outlive the handle.
func (s *Store) OpenRaw(opts Options, conns int) (*sql.DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return openDB(s.path, opts.WithDefaults(), roleManagedRaw, max(conns, 1))
}
