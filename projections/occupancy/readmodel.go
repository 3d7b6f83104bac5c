package occupancy

import (
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "occupancy"

// Phases of a session row.
const (
	phasePending = "pending"
	phaseActive  = "active"
	phaseEnded   = "ended"
)

// ReadModel is the occupancy projection and its queries, bound to one
// database. Run it with a projections.Projector over the same DB.
type ReadModel struct {
	db  *projections.DB
	sql statements
}

var _ projections.Projection = (*ReadModel)(nil)

// New returns the read model on db.
func New(db *projections.DB) *ReadModel {
	return &ReadModel{db: db, sql: newStatements(db)}
}

// Name implements projections.Projection.
func (*ReadModel) Name() string { return Name }

// EventTypes implements projections.Projection: what domain/quota's
// Ledger folds.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeSessionRequested, domain.TypeSessionScheduled,
		domain.TypeSessionTerminated, domain.TypeSessionCancelled, domain.TypeSessionErrored,
		domain.TypeAgentAllocated, domain.TypeAgentReleased,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string {
	return []string{"occupancy_sessions", "occupancy_requested", "occupancy_allocations", "occupancy_totals"}
}

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// scopeColumns are the session columns that name each scope's subject.
var scopeColumns = map[quota.Scope]string{
	quota.ScopeKeypair: "access_key",
	quota.ScopeUser:    "user_id",
	quota.ScopeProject: "project",
	quota.ScopeDomain:  "domain",
}

type statements struct {
	insertSession, insertRequested          string
	scheduled, ended, dropRequested, forget string
	allocate, release                       string
	// The totals' changes, each queued before the fact rows change.
	countRequested, countScheduled, countEnded string
	countAllocated, countReleased              string
	dropZeros                                  string
	subject, subjects                          string
}

func newStatements(db *projections.DB) statements {
	return statements{
		insertSession: db.SQL(`INSERT INTO {schema}.occupancy_sessions (
    session_id, access_key, user_id, project, domain, phase, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (session_id) DO NOTHING`),
		insertRequested: db.SQL(`INSERT INTO {schema}.occupancy_requested (session_id, slot, amount)
VALUES ($1, $2, $3)
ON CONFLICT (session_id, slot) DO NOTHING`),
		scheduled: db.SQL(`UPDATE {schema}.occupancy_sessions SET phase = $2, last_position = $4
 WHERE session_id = $1 AND phase = $3`),
		ended: db.SQL(`UPDATE {schema}.occupancy_sessions SET phase = $2, last_position = $3
 WHERE session_id = $1`),
		dropRequested: db.SQL(`DELETE FROM {schema}.occupancy_requested WHERE session_id = $1`),
		// A session's row goes once it has ended and holds nothing.
		forget: db.SQL(`DELETE FROM {schema}.occupancy_sessions
 WHERE session_id = $1 AND phase = $2
   AND NOT EXISTS (SELECT 1 FROM {schema}.occupancy_allocations a WHERE a.session_id = $1)`),
		allocate: db.SQL(`INSERT INTO {schema}.occupancy_allocations (kernel_id, slot, session_id, amount)
VALUES ($1, $2, $3, $4)
ON CONFLICT (kernel_id, slot) DO NOTHING`),
		release: db.SQL(`DELETE FROM {schema}.occupancy_allocations WHERE kernel_id = $1`),

		// A new session ($1, requested at position $2) queues one more
		// session and its requested slots, for each of its subjects.
		countRequested: db.SQL(addToTotals(
			`'`+phasePending+`', '', 1
  FROM {schema}.occupancy_sessions s
 WHERE s.session_id = $1 AND s.phase = '`+phasePending+`' AND s.last_position = $2`,
			`'requested', r.slot, r.amount
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE r.session_id = $1 AND s.phase = '`+phasePending+`' AND s.last_position = $2`)),
		// A pending session ($1) scheduled: one pending fewer, one active
		// more, its requested slots no longer queued.
		countScheduled: db.SQL(addToTotals(
			`'`+phasePending+`', '', -1
  FROM {schema}.occupancy_sessions s
 WHERE s.session_id = $1 AND s.phase = '`+phasePending+`'`,
			`'`+phaseActive+`', '', 1
  FROM {schema}.occupancy_sessions s
 WHERE s.session_id = $1 AND s.phase = '`+phasePending+`'`,
			`'requested', r.slot, -r.amount
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE r.session_id = $1 AND s.phase = '`+phasePending+`'`)),
		// A session ($1) ended: one fewer in its phase, and its requested
		// slots no longer queued if it was pending.
		countEnded: db.SQL(addToTotals(
			`s.phase, '', -1
  FROM {schema}.occupancy_sessions s
 WHERE s.session_id = $1 AND s.phase <> '`+phaseEnded+`'`,
			`'requested', r.slot, -r.amount
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE r.session_id = $1 AND s.phase = '`+phasePending+`'`)),
		// An allocation's slot (kernel $1, slot $2, session $3, amount $4)
		// occupies more for each subject of its session, unless it was
		// already there.
		countAllocated: db.SQL(addToTotals(
			`'occupied', CAST($2 AS TEXT), CAST($4 AS BIGINT)
  FROM {schema}.occupancy_sessions s
 WHERE s.session_id = $3
   AND NOT EXISTS (SELECT 1 FROM {schema}.occupancy_allocations a WHERE a.kernel_id = $1 AND a.slot = $2)`)),
		// A kernel's allocation ($1) released: what it occupied is given
		// back by each subject of its session.
		countReleased: db.SQL(addToTotals(
			`'occupied', a.slot, -a.amount
  FROM {schema}.occupancy_allocations a
  JOIN {schema}.occupancy_sessions s ON s.session_id = a.session_id
 WHERE a.kernel_id = $1`)),
		// A total back at 0 is a subject that holds and queues nothing.
		dropZeros: db.SQL(`DELETE FROM {schema}.occupancy_totals WHERE amount = 0`),

		subject: db.SQL(`SELECT kind, slot, amount FROM {schema}.occupancy_totals
 WHERE scope = $1 AND subject = $2`),
		subjects: db.SQL(`SELECT kind, subject, slot, amount FROM {schema}.occupancy_totals
 WHERE scope = $1`),
	}
}

// addToTotals is a statement that adds rows to the totals, for every
// scope: each part is "kind, slot, amount FROM ... WHERE ..." over
// sessions aliased s, and is read once per scope with the subject taken
// from the scope's column of s.
func addToTotals(parts ...string) string {
	var rows []string
	for _, scope := range quota.Scopes {
		for _, part := range parts {
			rows = append(rows, `SELECT '`+string(scope)+`', s.`+scopeColumns[scope]+`, `+part)
		}
	}
	// "WHERE true" tells SQLite's parser that ON CONFLICT belongs to the
	// INSERT, not to a join of the SELECT.
	return `INSERT INTO {schema}.occupancy_totals AS t (scope, subject, kind, slot, amount)
SELECT * FROM (
` + strings.Join(rows, "\nUNION ALL\n") + `
) AS d WHERE true
ON CONFLICT (scope, subject, kind, slot) DO UPDATE SET amount = t.amount + excluded.amount`
}

// recount is what the totals hold, summed from the fact rows: the
// migration that introduced the totals fills them with it.
func recount() string {
	var rows []string
	for _, scope := range quota.Scopes {
		col := scopeColumns[scope]
		rows = append(rows, `SELECT '`+string(scope)+`', s.`+col+`, 'occupied', a.slot, CAST(SUM(a.amount) AS BIGINT)
  FROM {schema}.occupancy_allocations a
  JOIN {schema}.occupancy_sessions s ON s.session_id = a.session_id
 GROUP BY s.`+col+`, a.slot`,
			`SELECT '`+string(scope)+`', s.`+col+`, 'requested', r.slot, CAST(SUM(r.amount) AS BIGINT)
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE s.phase = '`+phasePending+`'
 GROUP BY s.`+col+`, r.slot`,
			`SELECT '`+string(scope)+`', s.`+col+`, s.phase, '', COUNT(*)
  FROM {schema}.occupancy_sessions s
 WHERE s.phase <> '`+phaseEnded+`'
 GROUP BY s.`+col+`, s.phase`)
	}
	return `INSERT INTO {schema}.occupancy_totals (scope, subject, kind, slot, amount)
` + strings.Join(rows, "\nUNION ALL\n")
}
