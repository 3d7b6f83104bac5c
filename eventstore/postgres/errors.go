package postgres

import (
	"context"
	"errors"
	"fmt"

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
)

// translate turns a driver error into the store's error at the boundary:
// ErrClosed once the store is closed, the context's error when it ended
// (kept in the chain next to the driver's), otherwise the driver error
// wrapped with the operation (a *pgconn.PgError, whose message names its
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
	return fmt.Errorf("eventstore/postgres: %s: %w", op, err)
}
