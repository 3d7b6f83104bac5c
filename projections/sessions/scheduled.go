package sessions

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/projections"
)

// scheduledRows is how many sessions (and kernels) one multi-row
// statement places on SQLite: a scheduling round records thousands of
// session.scheduled events, and one UPDATE per row costs mostly the
// statement's own overhead. Fewer rows left over at the end of a batch
// take the one-row statements. On PostgreSQL one statement takes every
// row of the batch, as arrays (multiRowUpdate).
const scheduledRows = 64

// held are the session.scheduled rows of the open batch not yet written
// (see projections.Flusher): they are written together, before any other
// write of the read model in the same transaction and at its end.
type held struct {
	mu       sync.Mutex
	tx       projections.Tx
	sessions [][]any // the scheduled statement's arguments
	kernels  [][]any // the placeKernel statement's arguments
	ids      map[any]bool
}

// hold keeps one session.scheduled's rows for tx, dropping what an
// earlier transaction left (a batch that failed and is applied again).
// It refuses (false) a session already held: one statement must not
// update a row twice.
func (h *held) hold(tx projections.Tx, session []any, kernels [][]any) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tx != tx {
		h.reset(tx)
	}
	if h.ids[session[0]] {
		return false
	}
	h.ids[session[0]] = true
	h.sessions = append(h.sessions, session)
	h.kernels = append(h.kernels, kernels...)
	return true
}

// reset empties the rows held, for tx.
func (h *held) reset(tx projections.Tx) {
	clear(h.sessions)
	clear(h.kernels)
	h.tx, h.sessions, h.kernels = tx, h.sessions[:0], h.kernels[:0]
	if h.ids == nil {
		h.ids = map[any]bool{}
	}
	clear(h.ids)
}

// Flush implements projections.Flusher: it writes the held rows.
func (m *ReadModel) Flush(_ context.Context, tx projections.Tx) error {
	m.flush(tx)
	return nil
}

// flush queues the held rows of tx, many per statement.
func (m *ReadModel) flush(tx projections.Tx) {
	h := &m.held
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tx == tx {
		if tx.Dialect() == projections.Postgres {
			queueColumns(tx, m.sql.placeKernels, h.kernels)
			queueColumns(tx, m.sql.scheduledMany, h.sessions)
		} else {
			queueRows(tx, m.sql.placeKernel, m.sql.placeKernels, h.kernels)
			queueRows(tx, m.sql.scheduled, m.sql.scheduledMany, h.sessions)
		}
	}
	h.reset(tx)
}

// queueRows queues rows scheduledRows at a time with many, the rest one
// by one with one.
func queueRows(tx projections.Tx, one, many string, rows [][]any) {
	for len(rows) >= scheduledRows {
		args := make([]any, 0, scheduledRows*len(rows[0]))
		for _, r := range rows[:scheduledRows] {
			args = append(args, r...)
		}
		tx.Queue(many, args...)
		rows = rows[scheduledRows:]
	}
	for _, r := range rows {
		tx.Queue(one, r...)
	}
}

// queueColumns queues rows as one statement whose parameters are columns
// (PostgreSQL arrays, unnested by the statement): however many rows, one
// statement to parse, bind and plan.
func queueColumns(tx projections.Tx, many string, rows [][]any) {
	if len(rows) == 0 {
		return
	}
	cols := make([]any, len(rows[0]))
	for c := range cols {
		col := make([]any, len(rows))
		for r, row := range rows {
			col[r] = row[c]
		}
		cols[c] = col
	}
	tx.Queue(many, cols...)
}

// multiRowUpdate writes an UPDATE of table from many rows of values: on
// SQLite scheduledRows rows of anonymous parameters (bound in order), on
// PostgreSQL one array parameter per column, unnested, for any number of
// rows. casts are the columns' types on PostgreSQL (the first is the key,
// id; the last the event's position, which guards the row like the
// one-row statements), set the assignments in terms of v.columnN.
func multiRowUpdate(db *projections.DB, table string, casts []string, set string) string {
	var b strings.Builder
	if db.Dialect() == projections.Postgres {
		fmt.Fprintf(&b, "UPDATE {schema}.%s SET %s FROM unnest(", table, set)
		names := make([]string, len(casts))
		for c, cast := range casts {
			if c > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d::%s[]", c+1, cast)
			names[c] = fmt.Sprintf("column%d", c+1)
		}
		fmt.Fprintf(&b, ") AS v(%s) WHERE %s.id = v.column1 AND %s.last_position < v.column%d",
			strings.Join(names, ", "), table, table, len(casts))
		return db.SQL(b.String())
	}
	// OR FAIL: a failing row leaves the rows before it updated instead of
	// undoing the statement, so SQLite keeps no statement journal (a copy
	// of every page the statement touches, about a tenth of a batch's
	// time). The error fails the whole batch transaction, which is rolled
	// back anyway.
	fmt.Fprintf(&b, "UPDATE OR FAIL {schema}.%s SET %s FROM (VALUES ", table, set)
	for r := range scheduledRows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range casts {
			if c > 0 {
				b.WriteString(", ")
			}
			// Anonymous parameters, bound in order: the driver looks a
			// numbered one's name up among all of them (hundreds here)
			// for each.
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	fmt.Fprintf(&b, ") AS v WHERE %s.id = v.column1 AND %s.last_position < v.column%d", table, table, len(casts))
	return db.SQL(b.String())
}
