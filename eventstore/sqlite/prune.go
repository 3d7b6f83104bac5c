package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairnhq/cairn/eventstore"
)

var _ eventstore.Pruner = (*Store)(nil)

// Prune implements eventstore.Pruner: one UPDATE in a write transaction on
// a handle of its own (under LockWrites, so it waits for this process's
// group commits, and BEGIN IMMEDIATE for other processes'). Rows stay,
// so positions stay dense (ReadAll relies on it).
func (s *Store) Prune(ctx context.Context, stream string, before int64, tomb eventstore.Tombstone) (n int64, err error) {
	if err := eventstore.CheckPrune(stream, before, tomb); err != nil {
		return 0, err
	}
	if s.isClosed.Load() {
		return 0, eventstore.ErrClosed
	}
	db, err := s.OpenRaw(s.opts, 1)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	release, err := s.LockWrites(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return 0, translate("prune", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var head sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(revision) FROM events WHERE stream = ?`, stream).Scan(&head); err != nil {
		return 0, translate("prune", err)
	}
	last := int64(-1)
	if head.Valid {
		last = head.Int64
	}
	if err := eventstore.CheckPruneHead(stream, before, last); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE events SET type = ?, version = 1, data = ?, metadata = NULL
		WHERE stream = ? AND revision < ? AND NOT (type = ? AND data = ? AND version = 1 AND metadata IS NULL)`,
		tomb.Type, tomb.Data, stream, before, tomb.Type, tomb.Data)
	if err != nil {
		return 0, translate("prune", err)
	}
	if n, err = res.RowsAffected(); err != nil {
		return 0, translate("prune", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, translate("prune commit", err)
	}
	s.tail.forget()
	return n, nil
}
