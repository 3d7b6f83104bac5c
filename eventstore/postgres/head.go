package postgres

import (
	"context"

	"github.com/cairnhq/cairn/eventstore"
)

// Head returns the position of the last event committed to the log (0 when
// it is empty). Events of transactions still running may later take
// smaller positions; none committed before the call is beyond it, which is
// what a reader waiting to see everything written before its request
// needs.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	if s.closed.Load() {
		return 0, eventstore.ErrClosed
	}
	var head int64
	if err := s.pool.QueryRow(ctx, s.sql.head).Scan(&head); err != nil {
		return 0, s.translate(ctx, "head", err)
	}
	return uint64(head), nil
}
