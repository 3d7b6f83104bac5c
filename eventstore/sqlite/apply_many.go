package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// manyRows is how many streams one revision lookup of an AppendMany reads,
// and how many events one of its INSERTs writes: a scheduling round
// appends to thousands of streams at once, and one statement per stream
// and per event cost mostly the statements' own overhead.
const manyRows = 32

// The statements of applyMany, with manyRows parameters or rows.
var (
	lastRevisionsQuery = `SELECT stream, MAX(revision) FROM events WHERE stream IN (?` +
		strings.Repeat(", ?", manyRows-1) + `) GROUP BY stream`
	insertManyQuery = `INSERT INTO events (position, id, stream, revision, type, version, data, metadata, recorded_at) VALUES ` +
		strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", manyRows-1) + `(?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// applyMany writes the parts of a request of several (inside its
// savepoint) with a revision lookup per manyRows streams and an INSERT per
// manyRows events, when every part's expected revision holds and no event
// id is stored already: the usual case. Otherwise ok is false, nothing of
// the request is left written (rolled back to the savepoint), and the
// caller applies the parts one by one, which tells an idempotent retry, a
// duplicate id and a wrong expected revision apart. err means the
// transaction must be abandoned.
func (tx *batchTx) applyMany(ctx context.Context, req *appendRequest) (results []eventstore.AppendResult, ok bool, err error) {
	currents, err := tx.lastRevisions(ctx, req.parts)
	if err != nil {
		return nil, false, err
	}
	results = make([]eventstore.AppendResult, len(req.parts))
	for i := range req.parts {
		if !req.parts[i].expected.Check(currents[i]) {
			return nil, false, nil
		}
		results[i].Revision = currents[i]
	}
	start, kept := tx.next, len(tx.recorded)
	args := make([]any, 0, manyRows*9)
	rows := 0
	flush := func() error {
		var err error
		if rows == manyRows {
			_, err = tx.conn.insertMany.ExecContext(ctx, args...)
		} else {
			for r := range rows {
				if _, err = tx.conn.insert.ExecContext(ctx, args[r*9:r*9+9]...); err != nil {
					break
				}
			}
		}
		args, rows = args[:0], 0
		return err
	}
	for i := range req.parts {
		p := &req.parts[i]
		for j := range p.events {
			ev := &p.events[j]
			rev := currents[i] + 1 + int64(j)
			args = append(args, tx.next, ev.ID[:], p.stream, rev, ev.Type, ev.Version, ev.Data, metadataColumn(ev.MetadataJSON), tx.recordedAt)
			if tx.keep {
				tx.recorded = append(tx.recorded, eventstore.RecordedEvent{ID: ev.ID, Stream: p.stream, Type: ev.Type, Version: ev.Version,
					Revision: rev, Position: uint64(tx.next), RecordedAt: time.UnixMicro(tx.recordedAt).UTC(),
					Data: ev.Data, Metadata: p.metadata[j]})
			}
			results[i] = eventstore.AppendResult{Revision: rev, Position: uint64(tx.next)}
			tx.next++
			if rows++; rows == manyRows {
				if err := flush(); err != nil {
					return nil, false, tx.abandonMany(ctx, err, start, kept)
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, false, tx.abandonMany(ctx, err, start, kept)
	}
	return results, true, nil
}

// abandonMany undoes applyMany's inserts after err: a stored id (nil: the
// parts are applied one by one next), or any other failure (returned).
func (tx *batchTx) abandonMany(ctx context.Context, err error, start int64, kept int) error {
	if !isUniqueViolation(err) {
		return translate("insert events", err)
	}
	if _, err := tx.conn.rollbackToMany.ExecContext(ctx); err != nil {
		return translate("rollback to savepoint", err)
	}
	tx.next, tx.recorded = start, tx.recorded[:kept]
	return nil
}

// lastRevisions returns each part's stream's last revision (-1 when it has
// none), reading manyRows streams per query.
func (tx *batchTx) lastRevisions(ctx context.Context, parts []appendPart) ([]int64, error) {
	byStream := make(map[string]int64, len(parts))
	args := make([]any, manyRows)
	for from := 0; from < len(parts); from += manyRows {
		chunk := parts[from:min(from+manyRows, len(parts))]
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)].stream // padded with the last one
		}
		rows, err := tx.conn.lastRevisions.QueryContext(ctx, args...)
		if err != nil {
			return nil, translate("read stream revisions", err)
		}
		for rows.Next() {
			var stream string
			var rev sql.NullInt64
			if err := rows.Scan(&stream, &rev); err != nil {
				rows.Close()
				return nil, translate("read stream revisions", err)
			}
			if rev.Valid {
				byStream[stream] = rev.Int64
			}
		}
		if err := rows.Close(); err != nil {
			return nil, translate("read stream revisions", err)
		}
		if err := rows.Err(); err != nil {
			return nil, translate("read stream revisions", err)
		}
	}
	out := make([]int64, len(parts))
	for i := range parts {
		rev, ok := byStream[parts[i].stream]
		if !ok {
			rev = -1
		}
		out[i] = rev
	}
	return out, nil
}
