package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the events recorded in a session's stream (session-<uuid>).
const (
	TypeSessionRequested      = "session.requested"
	TypeSessionPendingUpdated = "session.pending-updated"
	TypeSessionScheduled      = "session.scheduled"
	TypeSessionStatusChanged  = "session.status-changed"
	TypeSessionTerminating    = "session.terminating"
	TypeSessionTerminated     = "session.terminated"
	TypeSessionCancelled      = "session.cancelled"
	TypeSessionErrored        = "session.errored"
	// Added with the DISCONNECTED status.
	TypeSessionDisconnected = "session.disconnected"
	TypeSessionReconnected  = "session.reconnected"
)

// SessionRequested: a user asked for a session; it is PENDING.
type SessionRequested struct {
	SessionID     uuid.UUID         `json:"session_id"`
	Name          string            `json:"name"`
	Owner         Owner             `json:"owner"`
	Domain        string            `json:"domain"`
	Project       string            `json:"project"`
	ResourceGroup string            `json:"resource_group"`
	Type          SessionType       `json:"type"`
	Image         string            `json:"image"`
	Command       string            `json:"command,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	Priority      int               `json:"priority"`
	ClusterMode   ClusterMode       `json:"cluster_mode"`
	// Kernels in order: the first is the main kernel.
	Kernels []KernelSpec `json:"kernels"`
	// Mounts are the virtual folders mounted into every kernel, resolved
	// and authorized when the session was requested (added in schema
	// version 1 as an optional field: older events have none).
	Mounts []VFolderMount `json:"mounts,omitempty"`
	At     time.Time      `json:"at"`
	// StartsAt, when set, is the earliest time the session may start.
	StartsAt time.Time `json:"starts_at,omitzero"`
	// Dependencies are sessions that must finish successfully first.
	Dependencies []uuid.UUID `json:"dependencies,omitempty"`
	// Architecture is the CPU architecture the session needs (its image's);
	// empty accepts any agent.
	Architecture string `json:"architecture,omitempty"`
	// PreopenPorts are container ports every kernel publishes besides its
	// image's service ports (optional: older events have none).
	PreopenPorts []int `json:"preopen_ports,omitempty"`
}

// KernelSpec is one requested kernel: its id, role and resource slots.
type KernelSpec struct {
	KernelID uuid.UUID  `json:"kernel_id"`
	Role     KernelRole `json:"role"`
	Slots    Slots      `json:"slots"`
}

// SessionPendingUpdated: the scheduler could not place a PENDING session,
// and why changed (it is recorded only when the reasons change).
type SessionPendingUpdated struct {
	// Reason is the status reason, e.g. no-available-instances or
	// predicate-checks-failed.
	Reason string `json:"reason"`
	// Details lists every failed check, for the user.
	Details []string `json:"details,omitempty"`
	// Tries is the number of scheduling attempts so far, as the scheduler
	// counts them.
	Tries int       `json:"tries"`
	At    time.Time `json:"at"`
}

// SessionScheduled: every kernel has an agent and its devices; the
// allocations are already recorded in the agents' streams.
type SessionScheduled struct {
	Kernels []KernelPlacement `json:"kernels"`
	Reason  string            `json:"reason"`
	At      time.Time         `json:"at"`
}

// SessionStatusChanged: the status derived from the kernels moved forward
// between SCHEDULED and RUNNING (PREPARING, PULLING, PREPARED, CREATING,
// RUNNING). Ends and failures have events of their own.
type SessionStatusChanged struct {
	Status SessionStatus `json:"status"`
	Reason string        `json:"reason"`
	At     time.Time     `json:"at"`
}

// SessionTerminating: the session is being torn down (user request, a
// limit, or one of its kernels ended while others still run).
type SessionTerminating struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// SessionTerminated: every kernel has ended.
type SessionTerminated struct {
	Reason string `json:"reason"`
	// Result is success or failure for batch sessions, empty otherwise.
	Result SessionResult `json:"result,omitempty"`
	// ExitCode is the main kernel's, when it reported one.
	ExitCode *int      `json:"exit_code,omitempty"`
	At       time.Time `json:"at"`
}

// SessionCancelled: the session ended without ever being scheduled.
type SessionCancelled struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// SessionErrored: the session failed; every kernel that had not ended is
// in ERROR too, and the session's allocations must be released.
type SessionErrored struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message,omitempty"`
	At      time.Time `json:"at"`
}

// SessionDisconnected: the agent running one of the session's kernels is
// silent past the heartbeat timeout. The first one moves the session to
// DISCONNECTED; its allocations are kept and nothing is torn down.
type SessionDisconnected struct {
	AgentID string    `json:"agent_id"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

// SessionReconnected: a disconnected agent of the session reported its
// kernel again. Status is the phase the session returns to (derived from
// its kernels), empty while another of its agents is still disconnected.
type SessionReconnected struct {
	AgentID string        `json:"agent_id"`
	Status  SessionStatus `json:"status,omitempty"`
	Reason  string        `json:"reason"`
	At      time.Time     `json:"at"`
}

func (SessionRequested) EventType() string      { return TypeSessionRequested }
func (SessionPendingUpdated) EventType() string { return TypeSessionPendingUpdated }
func (SessionScheduled) EventType() string      { return TypeSessionScheduled }
func (SessionStatusChanged) EventType() string  { return TypeSessionStatusChanged }
func (SessionTerminating) EventType() string    { return TypeSessionTerminating }
func (SessionTerminated) EventType() string     { return TypeSessionTerminated }
func (SessionCancelled) EventType() string      { return TypeSessionCancelled }
func (SessionErrored) EventType() string        { return TypeSessionErrored }
func (SessionDisconnected) EventType() string   { return TypeSessionDisconnected }
func (SessionReconnected) EventType() string    { return TypeSessionReconnected }
