package sqlite

import (
	"context"

	"github.com/cairnhq/cairn/eventstore"
)

// Head returns the position of the last event committed to the log (0 when
// it is empty): every event committed before the call is at or before it.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	if s.isClosed.Load() {
		return 0, eventstore.ErrClosed
	}
	var head int64
	if err := s.readDB.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) FROM events`).Scan(&head); err != nil {
		return 0, s.readError(ctx, "head", err)
	}
	return uint64(head), nil
}
