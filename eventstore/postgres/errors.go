package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnhq/cairn/eventstore"
)

// SQLSTATE codes the store branches on (never on message text).
const (
	codeUniqueViolation      = "23505"
	codeDeadlockDetected     = "40P01"
	codeSerializationFailure = "40001"
	codeProgramLimitExceeded = "54000"
	codeNumericOutOfRange    = "22003"
	classDataException       = "22"
	codeDiskFull             = "53100"
)

// IsDiskFull reports whether err is PostgreSQL's disk_full (SQLSTATE
// 53100): the server could not extend a file.
func IsDiskFull(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeDiskFull
}

// translate turns a driver error into the store's error at the boundary:
// ErrClosed once the store is closed, the context's error when it ended
// (kept in the chain next to the driver's), otherwise the driver error
// wrapped with the operation (disk_full as eventstore.StorageFull) (a *pgconn.PgError, whose message names its
// SQLSTATE, stays reachable with errors.As).
func (s *Store) translate(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if !errors.Is(err, ctxErr) {
			err = errors.Join(ctxErr, err)
		}
		return fmt.Errorf("eventstore/postgres: %s: %w", op, err)
	}
	if s.closed.Load() {
		return fmt.Errorf("eventstore/postgres: %s: %w", op, eventstore.ErrClosed)
	}
	if IsDiskFull(err) {
		return eventstore.StorageFull("eventstore/postgres: "+op, err)
	}
	return fmt.Errorf("eventstore/postgres: %s: %w", op, err)
}
