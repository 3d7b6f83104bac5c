package sessions

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "sessions"

// ReadModel is the sessions projection and its queries, bound to one
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

// EventTypes implements projections.Projection: the events of session
// streams.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeSessionRequested,
		domain.TypeSessionPendingUpdated,
		domain.TypeSessionScheduled,
		domain.TypeSessionStatusChanged,
		domain.TypeSessionTerminating,
		domain.TypeSessionTerminated,
		domain.TypeSessionCancelled,
		domain.TypeSessionErrored,
		domain.TypeSessionDisconnected,
		domain.TypeSessionReconnected,
		domain.TypeKernelPreparing,
		domain.TypeKernelPulling,
		domain.TypeKernelPrepared,
		domain.TypeKernelCreating,
		domain.TypeKernelRunning,
		domain.TypeKernelExited,
		domain.TypeKernelTerminated,
		domain.TypeKernelErrored,
		domain.TypeKernelPullProgressed,
		domain.TypeKernelAppsReady,
		// Access records about sessions: their last use.
		domain.TypeAccessLogged,
		domain.TypeAccessBatchLogged,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return []string{"sessions", "kernels"} }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// statements are the read model's SQL, rewritten for its database.
type statements struct {
	insertSession   string
	insertKernel    string
	pendingUpdated  string
	scheduled       string
	scheduledMany   string
	placeKernel     string
	placeKernels    string
	setStatus       string
	terminated      string
	ended           string
	endKernels      string
	kernelStatus    string
	kernelPull      string
	kernelAppsReady string
	touchSession    string
	used            string
	getSession      string
	listSessionsFmt string
}

// sessionColumns and kernelColumns are what the queries read, in the order
// scanSessionKernel scans them.
const (
	sessionColumns = `s.id, s.name, s.owner_user_id, s.owner_access_key, s.domain, s.project,
       s.resource_group, s.type, s.image, s.command, s.priority, s.cluster_mode, s.cluster_size,
       s.status, s.status_reason, s.status_message, s.pending_details, s.pending_tries,
       s.requested_slots, s.result, s.exit_code,
       s.created_at, s.scheduled_at, s.started_at, s.terminated_at, s.created_position, s.last_position,
       s.last_used_at`
	kernelColumns = `k.id, k.idx, k.role, k.agent_id, k.container_id, k.status, k.status_reason,
       k.status_message, k.exit_code, k.requested_slots, k.devices, k.last_position, k.service_ports,
       k.pull_progress, k.apps_ready`
)

func newStatements(db *projections.DB) statements {
	return statements{
		insertSession: db.SQL(`INSERT INTO {schema}.sessions (
    id, name, owner_user_id, owner_access_key, domain, project, resource_group, type, image,
    command, priority, cluster_mode, cluster_size, status, status_reason, status_message,
    pending_details, pending_tries, requested_slots, result,
    created_at, created_position, last_position, starts_at, architecture, dependencies)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, '', '', $15, 0, $16, '', $17, $18, $18, $19, $20, $21)
ON CONFLICT (id) DO NOTHING`),
		insertKernel: db.SQL(`INSERT INTO {schema}.kernels (
    id, session_id, idx, role, agent_id, container_id, status, status_reason, status_message,
    requested_slots, devices, last_position)
VALUES ($1, $2, $3, $4, '', '', $5, '', '', $6, $7, $8)
ON CONFLICT (id) DO NOTHING`),
		pendingUpdated: db.SQL(`UPDATE {schema}.sessions
   SET status_reason = $2, pending_details = $3, pending_tries = $4, last_position = $5
 WHERE id = $1 AND last_position < $5`),
		scheduled: db.SQL(`UPDATE {schema}.sessions
   SET status = $2, status_reason = $3, pending_details = $4, scheduled_at = $5, last_position = $6
 WHERE id = $1 AND last_position < $6`),
		placeKernel: db.SQL(`UPDATE {schema}.kernels
   SET agent_id = $2, devices = $3, status = $4, status_reason = $5, last_position = $6
 WHERE id = $1 AND last_position < $6`),
		scheduledMany: multiRowUpdate(db, "sessions",
			[]string{"uuid", "text", "text", "jsonb", "timestamptz", "bigint"},
			"status = v.column2, status_reason = v.column3, pending_details = v.column4, "+
				"scheduled_at = v.column5, last_position = v.column6"),
		placeKernels: multiRowUpdate(db, "kernels",
			[]string{"uuid", "text", "jsonb", "text", "text", "bigint"},
			"agent_id = v.column2, devices = v.column3, status = v.column4, status_reason = v.column5, last_position = v.column6"),
		used: db.SQL(`UPDATE {schema}.sessions SET last_used_at = $2
 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`),
		setStatus: db.SQL(`UPDATE {schema}.sessions
   SET status = $2, status_reason = $3, started_at = COALESCE(started_at, $4), last_position = $5
 WHERE id = $1 AND last_position < $5`),
		terminated: db.SQL(`UPDATE {schema}.sessions
   SET status = $2, status_reason = $3, result = $4, exit_code = COALESCE($5, exit_code),
       terminated_at = $6, last_position = $7
 WHERE id = $1 AND last_position < $7`),
		ended: db.SQL(`UPDATE {schema}.sessions
   SET status = $2, status_reason = $3, status_message = $4, terminated_at = $5, last_position = $6
 WHERE id = $1 AND last_position < $6`),
		endKernels: db.SQL(`UPDATE {schema}.kernels
   SET status = $2, status_reason = $3, last_position = $4
 WHERE session_id = $1 AND status NOT IN ($5, $6, $7) AND last_position < $4`),
		kernelStatus: db.SQL(`UPDATE {schema}.kernels
   SET status = $2, status_reason = $3, container_id = COALESCE($4, container_id),
       exit_code = COALESCE($5, exit_code), status_message = COALESCE($6, status_message),
       last_position = $7, service_ports = COALESCE($8, service_ports)
 WHERE id = $1 AND last_position < $7`),
		kernelPull: db.SQL(`UPDATE {schema}.kernels SET pull_progress = $2, last_position = $3
 WHERE id = $1 AND last_position < $3`),
		kernelAppsReady: db.SQL(`UPDATE {schema}.kernels SET apps_ready = $2, last_position = $3
 WHERE id = $1 AND last_position < $3`),
		touchSession: db.SQL(`UPDATE {schema}.sessions SET last_position = $2 WHERE id = $1 AND last_position < $2`),
		getSession: db.SQL(`SELECT ` + sessionColumns + `, ` + kernelColumns + `
  FROM {schema}.sessions s JOIN {schema}.kernels k ON k.session_id = s.id
 WHERE s.id = $1
 ORDER BY k.idx`),
		// The first %s is the WHERE clause, the second the LIMIT placeholder.
		listSessionsFmt: db.SQL(`WITH page AS (
    SELECT * FROM {schema}.sessions
     WHERE %s
     ORDER BY created_position DESC
     LIMIT %s
)
SELECT ` + sessionColumns + `, ` + kernelColumns + `
  FROM page s JOIN {schema}.kernels k ON k.session_id = s.id
 ORDER BY s.created_position DESC, k.idx`),
	}
}
