package projections

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairnhq/cairn/domain"
)

// QueryOne runs a single-row read on db and scans it: no row is a
// KindNotFound error about what, a failing database KindUnavailable.
func QueryOne[T any](ctx context.Context, db *DB, op, what string, scan func(Row) (T, error), query string, args ...any) (T, error) {
	v, err := scan(db.QueryRow(ctx, query, args...))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return v, domain.NotFound(op, what)
	case err != nil:
		return v, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return v, nil
}

// QueryList runs a read on db and scans every row; the result is never
// nil. A row that does not scan is KindInternal, a failing database
// KindUnavailable.
func QueryList[T any](ctx context.Context, db *DB, op string, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		out = append(out, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return out, nil
}
