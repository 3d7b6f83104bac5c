package usage

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "usage"

// ReadModel is the usage projection and its query, bound to one
// database. Run it with a projections.Projector over the same DB.
type ReadModel struct {
	db   *projections.DB
	sql  statements
	held held
}

var (
	_ projections.Projection = (*ReadModel)(nil)
	_ projections.Flusher    = (*ReadModel)(nil)
)

// New returns the read model on db.
func New(db *projections.DB) *ReadModel {
	return &ReadModel{db: db, sql: newStatements(db)}
}

// Name implements projections.Projection.
func (*ReadModel) Name() string { return Name }

// EventTypes implements projections.Projection: who owns a session, when
// it starts, what its kernels hold from allocation to release, and the
// names of users.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeUserCreated, domain.TypeUserModified,
		domain.TypeSessionRequested, domain.TypeSessionScheduled,
		domain.TypeAgentAllocated, domain.TypeAgentReleased,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string {
	return []string{"usage_users", "usage_sessions", "usage_kernels", "usage_kernel_slots", "usage_days"}
}

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

type statements struct {
	insertUser, renameUser     string
	insertSession, started     string
	allocate, allocateSlot     string
	allocatedFmt, day, release string
}

func newStatements(db *projections.DB) statements {
	return statements{
		insertUser: db.SQL(`INSERT INTO {schema}.usage_users (user_id, email, username) VALUES ($1, $2, $3)
ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, username = excluded.username`),
		renameUser: db.SQL(`UPDATE {schema}.usage_users SET username = $2 WHERE user_id = $1`),
		insertSession: db.SQL(`INSERT INTO {schema}.usage_sessions (session_id, user_id, project, domain)
VALUES ($1, $2, $3, $4)
ON CONFLICT (session_id) DO NOTHING`),
		// A session starts once: the first scheduling counts.
		started: db.SQL(`UPDATE {schema}.usage_sessions SET started_day = $2
 WHERE session_id = $1 AND started_day IS NULL`),
		// The kernel takes its session's owner, so the day rows need no
		// join to be filtered.
		allocate: db.SQL(`INSERT INTO {schema}.usage_kernels (kernel_id, session_id, user_id, project, domain, allocated_ms)
SELECT $1, s.session_id, s.user_id, s.project, s.domain, $3
  FROM {schema}.usage_sessions s WHERE s.session_id = $2
ON CONFLICT (kernel_id) DO NOTHING`),
		allocateSlot: db.SQL(`INSERT INTO {schema}.usage_kernel_slots (kernel_id, slot, amount) VALUES ($1, $2, $3)
ON CONFLICT (kernel_id, slot) DO NOTHING`),
		// The open kernels among a list ("%s": its placeholders).
		allocatedFmt: db.SQL(`SELECT CAST(kernel_id AS TEXT), allocated_ms FROM {schema}.usage_kernels
 WHERE released_ms IS NULL AND kernel_id IN (%s)`),
		day: db.SQL(`INSERT INTO {schema}.usage_days (kernel_id, day, user_id, project, domain, millis)
SELECT k.kernel_id, $2, k.user_id, k.project, k.domain, $3
  FROM {schema}.usage_kernels k WHERE k.kernel_id = $1
ON CONFLICT (kernel_id, day) DO NOTHING`),
		release: db.SQL(`UPDATE {schema}.usage_kernels SET released_ms = $2
 WHERE kernel_id = $1 AND released_ms IS NULL`),
	}
}
