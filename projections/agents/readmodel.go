package agents

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "agents"

// ReadModel is the agents projection and its queries, bound to one
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

// EventTypes implements projections.Projection: the events of agent
// streams.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeAgentRegistered,
		domain.TypeAgentAllocated,
		domain.TypeAgentReleased,
		domain.TypeAgentLost,
		domain.TypeAgentRejoined,
		domain.TypeAgentDisconnected,
		domain.TypeAgentReconnected,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return []string{"agents", "agent_allocations"} }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

type statements struct {
	register    string
	allocate    string
	release     string
	allocations string
	occupancy   string
	setStatus   string
	get         string
	list        string
	listStatus  string
}

const agentColumns = `id, architecture, status, capacity, devices, occupied, device_occupied,
       allocations, registered_at, last_seen_at, lost_at, last_position`

func newStatements(db *projections.DB) statements {
	return statements{
		// A first registration creates the agent alive; later ones update
		// what it offers and when it was seen, and keep its status (a lost
		// agent comes back with agent.rejoined).
		register: db.SQL(`INSERT INTO {schema}.agents AS a (
    id, architecture, status, capacity, devices, occupied, device_occupied, allocations,
    registered_at, last_seen_at, last_position)
VALUES ($1, $2, $3, $4, $5, '{}', '{}', 0, $6, $6, $7)
ON CONFLICT (id) DO UPDATE
   SET architecture = excluded.architecture, capacity = excluded.capacity,
       devices = excluded.devices, last_seen_at = excluded.last_seen_at,
       last_position = excluded.last_position
 WHERE a.last_position < excluded.last_position`),
		allocate: db.SQL(`INSERT INTO {schema}.agent_allocations (
    agent_id, kernel_id, session_id, slots, devices, allocated_at, position)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (agent_id, kernel_id) DO NOTHING`),
		release:     db.SQL(`DELETE FROM {schema}.agent_allocations WHERE agent_id = $1 AND kernel_id = $2`),
		allocations: db.SQL(`SELECT slots, devices FROM {schema}.agent_allocations WHERE agent_id = $1 ORDER BY kernel_id`),
		occupancy: db.SQL(`UPDATE {schema}.agents
   SET occupied = $2, device_occupied = $3, allocations = $4, last_position = $5
 WHERE id = $1 AND last_position < $5`),
		setStatus: db.SQL(`UPDATE {schema}.agents
   SET status = $2, lost_at = COALESCE($3, lost_at), last_seen_at = COALESCE($4, last_seen_at),
       last_position = $5
 WHERE id = $1 AND last_position < $5`),
		get:        db.SQL(`SELECT ` + agentColumns + ` FROM {schema}.agents WHERE id = $1`),
		list:       db.SQL(`SELECT ` + agentColumns + ` FROM {schema}.agents ORDER BY id`),
		listStatus: db.SQL(`SELECT ` + agentColumns + ` FROM {schema}.agents WHERE status = $1 ORDER BY id`),
	}
}
