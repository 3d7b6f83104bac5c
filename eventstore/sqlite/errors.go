package sqlite

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrSchemaTooNew: the database was migrated by a newer Cairn than this
// build; Open refuses it rather than write in a shape it does not know.
var ErrSchemaTooNew = errors.New("eventstore/sqlite: database schema is newer than this build")

// translate wraps a driver error with the operation that failed. Errors the
// store's callers branch on (refusals, ErrClosed) are produced explicitly
// where they are detected, from error codes, never from messages; what is
// left here is unexpected (I/O, disk full, a lock held too long by another
// process) and keeps its *sqlite.Error in the chain for errors.As.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("eventstore/sqlite: %s: %w", op, err)
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
