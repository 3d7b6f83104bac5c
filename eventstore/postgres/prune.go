package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
)

var _ eventstore.Pruner = (*Store)(nil)

// Prune implements eventstore.Pruner: one UPDATE in a transaction holding
// the stream's append lock (the advisory lock append_events takes), so the
// last revision it checks is the last one while it runs. No row is
// inserted or deleted: positions and revisions stay as they were.
func (s *Store) Prune(ctx context.Context, stream string, before int64, tomb eventstore.Tombstone) (n int64, err error) {
	if err := eventstore.CheckPrune(stream, before, tomb); err != nil {
		return 0, err
	}
	if s.closed.Load() {
		return 0, eventstore.ErrClosed
	}
	events := quoteIdent(s.opts.Schema) + ".events"
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return 0, s.translate(ctx, "prune", err)
	}
	defer func() {
		if err != nil {
			if rerr := tx.Rollback(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, stream); err != nil {
		return 0, s.translate(ctx, "prune", err)
	}
	var head int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(revision), -1) FROM `+events+` WHERE stream = $1`, stream).Scan(&head); err != nil {
		return 0, s.translate(ctx, "prune", err)
	}
	if err := eventstore.CheckPruneHead(stream, before, head); err != nil {
		return 0, err
	}
	tag, err := tx.Exec(ctx, `UPDATE `+events+` SET type = $1, version = 1, data = $2, metadata = ''::bytea
		WHERE stream = $3 AND revision < $4 AND NOT (type = $1 AND data = $2 AND version = 1 AND metadata = ''::bytea)`,
		tomb.Type, tomb.Data, stream, before)
	if err != nil {
		return 0, s.translate(ctx, "prune", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, s.translate(ctx, "prune commit", err)
	}
	s.recent.forget()
	return tag.RowsAffected(), nil
}
