package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the events recorded in an agent's stream (agent-<id>).
const (
	TypeAgentRegistered = "agent.registered"
	TypeAgentAllocated  = "agent.allocated"
	TypeAgentReleased   = "agent.released"
	TypeAgentLost       = "agent.lost"
	TypeAgentRejoined   = "agent.rejoined"
	// Added with the disconnected state: an agent silent past the
	// heartbeat timeout, and its return.
	TypeAgentDisconnected = "agent.disconnected"
	TypeAgentReconnected  = "agent.reconnected"
)

// AgentRegistered: an agent announced itself, or announced a changed
// capacity or device set. The latest one is the agent's capacity.
type AgentRegistered struct {
	AgentID      string    `json:"agent_id"`
	Architecture string    `json:"architecture"`
	Capacity     Slots     `json:"capacity"`
	Devices      []Device  `json:"devices,omitempty"`
	SealKey      string    `json:"seal_key,omitempty"`
	At           time.Time `json:"at"`
}

// AgentAllocated: a kernel's slots and device shares are reserved on the
// agent. Occupancy is the sum of allocations not yet released.
type AgentAllocated struct {
	KernelID  uuid.UUID     `json:"kernel_id"`
	SessionID uuid.UUID     `json:"session_id"`
	Slots     Slots         `json:"slots"`
	Devices   []DeviceShare `json:"devices,omitempty"`
	At        time.Time     `json:"at"`
}

// AgentReleased: a kernel's allocation is given back.
type AgentReleased struct {
	KernelID  uuid.UUID `json:"kernel_id"`
	SessionID uuid.UUID `json:"session_id"`
	Reason    string    `json:"reason"`
	At        time.Time `json:"at"`
}

// AgentLost: the agent stopped answering; nothing is allocated on it until
// it rejoins.
type AgentLost struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// AgentRejoined: a lost agent registered again.
type AgentRejoined struct {
	At time.Time `json:"at"`
}

// AgentDisconnected: the agent stopped answering for longer than the
// heartbeat timeout. It keeps its allocations (its kernels most likely
// still run and hold their devices) but takes no new ones until it is
// heard from again (agent.reconnected) or given up on (agent.lost).
type AgentDisconnected struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// AgentReconnected: a disconnected agent was heard from again (a
// heartbeat or a registration) before it was given up on.
type AgentReconnected struct {
	At time.Time `json:"at"`
}

func (AgentRegistered) EventType() string   { return TypeAgentRegistered }
func (AgentAllocated) EventType() string    { return TypeAgentAllocated }
func (AgentReleased) EventType() string     { return TypeAgentReleased }
func (AgentLost) EventType() string         { return TypeAgentLost }
func (AgentRejoined) EventType() string     { return TypeAgentRejoined }
func (AgentDisconnected) EventType() string { return TypeAgentDisconnected }
func (AgentReconnected) EventType() string  { return TypeAgentReconnected }
