package readmodels

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/projections"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaName is what NewPostgres accepts, as the event store does.
var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// rollbackTimeout bounds the ROLLBACK of a batch whose context has ended.
const rollbackTimeout = 5 * time.Second

// NewPostgres builds a DB on a PostgreSQL pool, with the read models'
// tables in schema: normally the event store's (postgres.Store.Pool() and
// Schema()), so read models live beside the events. The pool stays the
// caller's. Its sessions must run READ COMMITTED (the event store's pool
// forces it).
func NewPostgres(pool *pgxpool.Pool, schema string) (*projections.DB, error) {
	if pool == nil {
		return nil, errors.New("readmodels: no PostgreSQL pool")
	}
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("readmodels: schema %q: want letters, digits and '_', at most 63 bytes, not starting with a digit", schema)
	}
	prefix := pgx.Identifier{schema}.Sanitize() + "."
	return projections.NewDB(projections.Postgres, prefix, &pgBackend{pool: pool, prefix: prefix}), nil
}

type pgBackend struct {
	pool   *pgxpool.Pool
	prefix string
}

func (b *pgBackend) Begin(ctx context.Context) (projections.BackendTx, error) {
	tx, err := b.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, err
	}
	return &pgTx{tx: tx, prefix: b.prefix}, nil
}

func (b *pgBackend) Query(ctx context.Context, query string, args ...any) (projections.Rows, error) {
	rows, err := b.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

func (b *pgBackend) QueryRow(ctx context.Context, query string, args ...any) projections.Row {
	return b.pool.QueryRow(ctx, query, args...)
}

func (b *pgBackend) Close() error { return nil }

func (b *pgBackend) IsFull(err error) bool { return postgres.IsDiskFull(err) }

// pgTx is a pgx transaction with a pipeline of queued statements.
type pgTx struct {
	tx     pgx.Tx
	prefix string
	event  *projections.Event
	batch  pgx.Batch
	// owners[i] is the event whose Apply queued the i-th statement.
	owners []*projections.Event
}

func (t *pgTx) Dialect() projections.Dialect { return projections.Postgres }
func (t *pgTx) SQL(query string) string {
	return strings.ReplaceAll(query, "{schema}.", t.prefix)
}

func (t *pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := t.Flush(ctx); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *pgTx) Queue(query string, args ...any) {
	t.batch.Queue(query, args...)
	t.owners = append(t.owners, t.event)
}

func (t *pgTx) Query(ctx context.Context, query string, args ...any) (projections.Rows, error) {
	if err := t.Flush(ctx); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

func (t *pgTx) QueryRow(ctx context.Context, query string, args ...any) projections.Row {
	if err := t.Flush(ctx); err != nil {
		return errRow{err}
	}
	return t.tx.QueryRow(ctx, query, args...)
}

func (t *pgTx) Applying(_ context.Context, ev *projections.Event) error {
	t.event = ev
	return nil
}

// flush sends the queued statements in one pipeline and reads their
// results in order; the first failure names the event that queued it.
func (t *pgTx) Flush(ctx context.Context) (err error) {
	n := t.batch.Len()
	if n == 0 {
		return nil
	}
	batch, owners := t.batch, t.owners
	t.batch, t.owners = pgx.Batch{}, nil
	results := t.tx.SendBatch(ctx, &batch)
	defer func() {
		if cerr := results.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for i := range n {
		if _, err := results.Exec(); err != nil {
			return &projections.QueuedError{Event: owners[i], Err: err}
		}
	}
	return nil
}

func (t *pgTx) Commit(ctx context.Context) error {
	if err := t.Flush(ctx); err != nil {
		return err
	}
	return t.tx.Commit(ctx)
}

// rollback runs even when the batch's context has ended, so the connection
// goes back to the pool clean.
func (t *pgTx) Rollback() error {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error {
	r.Rows.Close()
	return r.Rows.Err()
}

// errRow is a Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

var _ projections.Backend = (*pgBackend)(nil)
