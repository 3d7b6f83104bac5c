package sqlite

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/cairnhq/cairn/eventstore"
)

// ErrSchemaTooNew: the database was migrated by a newer Cairn than this
// build; Open refuses it rather than write in a shape it does not know.
var ErrSchemaTooNew = errors.New("eventstore/sqlite: database schema is newer than this build")

// translate wraps a driver error with the operation that failed. Errors the
// store's callers branch on (refusals, ErrClosed) are produced explicitly
// where they are detected, from error codes, never from messages; a full
// disk (SQLITE_FULL) becomes eventstore.StorageFull (KindUnavailable); what
// is left is unexpected (I/O, a lock held too long by another process).
// The *sqlite.Error stays in the chain for errors.As.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if IsFull(err) {
		return eventstore.StorageFull("eventstore/sqlite: "+op, err)
	}
	return fmt.Errorf("eventstore/sqlite: %s: %w", op, err)
}

// IsFull reports whether err is SQLite's "database or disk is full"
// (SQLITE_FULL, by its primary result code), or a file write's ENOSPC.
func IsFull(err error) bool {
	code, ok := sqliteCode(err)
	return (ok && code&0xff == sqlite3.SQLITE_FULL) || eventstore.IsStorageFull(err)
}

// sqliteCode returns the extended SQLite result code of err, if it carries
// one.
func sqliteCode(err error) (int, bool) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code(), true
	}
	return 0, false
}

// isUniqueViolation reports whether err is a UNIQUE constraint failure.
func isUniqueViolation(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
