package projections

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// WithLog returns a DB over the same database and tables as db whose
// rebuilds count the log's events in log's database: a shadow database
// (a schema or file of its own, holding a copy of a read model being
// rebuilt) has no events table.
func (db *DB) WithLog(log *DB) *DB {
	c := *db
	c.log = log
	return &c
}

// logDB is the database holding the events table.
func (db *DB) logDB() *DB {
	if db.log != nil {
		return db.log
	}
	return db
}

// Head returns the position of the last event stored in db's log: the
// event store shares the read models' database.
func Head(ctx context.Context, db *DB) (uint64, error) {
	var last int64
	q := db.logDB().SQL(`SELECT COALESCE(MAX(position), 0) FROM {schema}.events`)
	if err := db.logDB().QueryRow(ctx, q).Scan(&last); err != nil {
		return 0, fmt.Errorf("projections: read the log's head: %w", err)
	}
	return uint64(last), nil
}

// Replace makes p's tables in live a copy of its tables in shadow, and
// live's checkpoint of p shadow's, in one transaction of live that holds
// live's checkpoint row: readers see the old rows or the new ones, never a
// mix, and a projector of p on live finds the checkpoint moved (ahead: it
// skips what the copy holds; back: it resubscribes). shadow must be a
// database of the same dialect where p was rebuilt (Rebuild) and where
// nothing writes while Replace runs; on PostgreSQL, a schema of the same
// database as live. It returns the position the copied rows reflect.
func Replace(ctx context.Context, live, shadow *DB, p Projection) (uint64, error) {
	name := p.Name()
	if live.dialect != shadow.dialect {
		return 0, fmt.Errorf("projections: %s: replace: a %s read model from a %s one", name, live.dialect, shadow.dialect)
	}
	var pos int64
	var version int
	if err := shadow.QueryRow(ctx, shadow.cp.read, name).Scan(&pos); err != nil {
		return 0, fmt.Errorf("projections: %s: replace: read the rebuilt checkpoint: %w", name, err)
	}
	if err := shadow.QueryRow(ctx, shadow.SQL(`SELECT schema_version FROM {schema}.projection_checkpoints WHERE name = $1`), name).Scan(&version); err != nil {
		return 0, fmt.Errorf("projections: %s: replace: read the rebuilt schema version: %w", name, err)
	}
	err := live.inTx(ctx, func(tx txn) error {
		cp, err := lockCheckpoint(ctx, live, tx, name)
		if err != nil {
			return err
		}
		if cp.schemaVersion != version {
			return fmt.Errorf("the rebuilt tables are at schema version %d, the live ones at %d", version, cp.schemaVersion)
		}
		tables := slices.Clone(p.Tables())
		slices.Reverse(tables)
		for _, t := range tables {
			if _, err := tx.Exec(ctx, live.SQL("DELETE FROM {schema}."+t)); err != nil {
				return fmt.Errorf("empty %s: %w", t, err)
			}
		}
		for _, t := range p.Tables() {
			if err := copyTable(ctx, tx, live, shadow, t); err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
		}
		_, err = tx.Exec(ctx, live.cp.setPos, name, pos)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("projections: %s: replace: %w", name, err)
	}
	return uint64(pos), nil
}

// copyTable inserts every row of table in shadow into table in live,
// inside tx. On PostgreSQL both are schemas of one database: one INSERT ...
// SELECT. On SQLite they are files of their own: the rows are read from
// shadow and inserted many per statement.
func copyTable(ctx context.Context, tx txn, live, shadow *DB, table string) error {
	if live.dialect == Postgres {
		_, err := tx.Exec(ctx, "INSERT INTO "+live.prefix+table+" SELECT * FROM "+shadow.prefix+table)
		return err
	}
	cols, err := QueryList(ctx, shadow, "projections.replace", func(r Row) (string, error) {
		var c string
		return c, r.Scan(&c)
	}, `SELECT name FROM pragma_table_info($1) ORDER BY cid`, table)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("the rebuilt database has no table %s", table)
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	list := strings.Join(quoted, ", ")
	// Rows go in copyRows at a time: one statement per row costs about as
	// much as the row's insert itself.
	per := max(1, copyParams/len(cols))
	insert := func(n int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + list + ") VALUES ")
		for r := range n {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := range cols {
				if c > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", r*len(cols)+c+1)
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	full := insert(per)
	rows, err := shadow.Query(ctx, "SELECT "+list+" FROM "+table)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, 0, per*len(cols))
	flush := func() error {
		if len(vals) == 0 {
			return nil
		}
		stmt := full
		if n := len(vals) / len(cols); n < per {
			stmt = insert(n)
		}
		_, err := tx.Exec(ctx, stmt, vals...)
		vals = vals[:0]
		return err
	}
	row := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range row {
		ptrs[i] = &row[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		vals = append(vals, row...)
		if len(vals) == per*len(cols) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// copyParams bounds the parameters of one INSERT of copyTable on SQLite.
const copyParams = 512
