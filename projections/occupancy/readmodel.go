package occupancy

import (
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
	return []string{"occupancy_sessions", "occupancy_requested", "occupancy_allocations"}
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
	subject, subjects                       map[quota.Scope]string
}

func newStatements(db *projections.DB) statements {
	st := statements{
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
		release:  db.SQL(`DELETE FROM {schema}.occupancy_allocations WHERE kernel_id = $1`),
		subject:  map[quota.Scope]string{},
		subjects: map[quota.Scope]string{},
	}
	for scope, col := range scopeColumns {
		// One statement, one snapshot: the occupied and pending sums and
		// the session counts of one subject ($1), as (kind, slot, amount).
		st.subject[scope] = db.SQL(`SELECT 'occupied', a.slot, CAST(SUM(a.amount) AS BIGINT)
  FROM {schema}.occupancy_allocations a
  JOIN {schema}.occupancy_sessions s ON s.session_id = a.session_id
 WHERE s.` + col + ` = $1
 GROUP BY a.slot
UNION ALL
SELECT 'requested', r.slot, CAST(SUM(r.amount) AS BIGINT)
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE s.` + col + ` = $1 AND s.phase = '` + phasePending + `'
 GROUP BY r.slot
UNION ALL
SELECT s.phase, '', COUNT(*)
  FROM {schema}.occupancy_sessions s
 WHERE s.` + col + ` = $1 AND s.phase <> '` + phaseEnded + `'
 GROUP BY s.phase`)
		// The same for every subject of the scope, as (kind, key, slot,
		// amount).
		st.subjects[scope] = db.SQL(`SELECT 'occupied', s.` + col + `, a.slot, CAST(SUM(a.amount) AS BIGINT)
  FROM {schema}.occupancy_allocations a
  JOIN {schema}.occupancy_sessions s ON s.session_id = a.session_id
 GROUP BY s.` + col + `, a.slot
UNION ALL
SELECT 'requested', s.` + col + `, r.slot, CAST(SUM(r.amount) AS BIGINT)
  FROM {schema}.occupancy_requested r
  JOIN {schema}.occupancy_sessions s ON s.session_id = r.session_id
 WHERE s.phase = '` + phasePending + `'
 GROUP BY s.` + col + `, r.slot
UNION ALL
SELECT s.phase, s.` + col + `, '', COUNT(*)
  FROM {schema}.occupancy_sessions s
 WHERE s.phase <> '` + phaseEnded + `'
 GROUP BY s.` + col + `, s.phase`)
	}
	return st
}
