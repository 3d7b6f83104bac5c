package domain

import (
	"sort"
	"time"

	"github.com/google/uuid"
)

// AgentStatus says whether an agent is reachable.
type AgentStatus string

const (
	AgentStatusAlive AgentStatus = "alive"
	// AgentStatusDisconnected: silent past the heartbeat timeout. Its
	// kernels most likely still run, so it keeps its allocations, but
	// nothing new is placed on it until it is heard from again.
	AgentStatusDisconnected AgentStatus = "disconnected"
	// AgentStatusLost: given up on (silent past the lost timeout, or an
	// operator said so); its allocations are released.
	AgentStatusLost AgentStatus = "lost"
)

// Allocation is what one kernel holds on an agent: its slots and the
// devices (with amounts) it takes.
type Allocation struct {
	KernelID  uuid.UUID
	SessionID uuid.UUID
	Slots     Slots
	Devices   []DeviceShare
	At        time.Time
}

func (a Allocation) clone() Allocation {
	a.Slots = a.Slots.Clone()
	a.Devices = append([]DeviceShare(nil), a.Devices...)
	return a
}

// Agent is the agent aggregate: what a node offers (capacity slots and
// accelerator devices), whether it is reachable, and what is allocated on
// it. Occupancy is never stored: it is the sum of the allocations folded
// from agent.allocated and agent.released events, so it cannot drift from
// them. The zero Agent is one that never registered (revision -1).
type Agent struct {
	id             string
	architecture   string
	sealKey        string
	capacity       Slots
	devices        []Device
	status         AgentStatus
	allocations    map[uuid.UUID]Allocation
	registeredAt   time.Time
	disconnectedAt time.Time
	lostAt         time.Time

	exists   bool
	revision int64
}

// Exists reports whether the agent has registered.
func (a *Agent) Exists() bool { return a.exists }

// Revision is the revision of the last event folded in, -1 for an agent
// that never registered: the expected revision of the next append.
func (a *Agent) Revision() int64 { return a.revision }

func (a *Agent) ID() string              { return a.id }
func (a *Agent) Architecture() string    { return a.architecture }
func (a *Agent) SealKey() string         { return a.sealKey }
func (a *Agent) Status() AgentStatus     { return a.status }
func (a *Agent) Capacity() Slots         { return a.capacity.Clone() }
func (a *Agent) RegisteredAt() time.Time { return a.registeredAt }
func (a *Agent) LostAt() time.Time       { return a.lostAt }

// DisconnectedAt is when the agent was last declared disconnected (zero if
// never).
func (a *Agent) DisconnectedAt() time.Time { return a.disconnectedAt }

// Devices returns the agent's devices, by id.
func (a *Agent) Devices() []Device { return append([]Device(nil), a.devices...) }

// Allocations returns the agent's allocations, by kernel id.
func (a *Agent) Allocations() []Allocation {
	out := make([]Allocation, 0, len(a.allocations))
	for _, al := range a.allocations {
		out = append(out, al.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KernelID.String() < out[j].KernelID.String() })
	return out
}

// Allocation returns what kernel holds on the agent, if anything.
func (a *Agent) Allocation(kernel uuid.UUID) (Allocation, bool) {
	al, ok := a.allocations[kernel]
	if !ok {
		return Allocation{}, false
	}
	return al.clone(), true
}

// SessionIDs returns the sessions holding allocations here, sorted.
func (a *Agent) SessionIDs() []uuid.UUID {
	seen := make(map[uuid.UUID]bool)
	var out []uuid.UUID
	for _, al := range a.allocations {
		if !seen[al.SessionID] {
			seen[al.SessionID] = true
			out = append(out, al.SessionID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Occupied is the sum of the allocations' slots.
func (a *Agent) Occupied() Slots {
	sum := Slots{}
	for _, al := range a.allocations {
		sum = sum.Add(al.Slots)
	}
	return sum
}

// Free is capacity minus occupancy, slot by slot. It can be negative when
// a re-registration shrank the capacity under what is allocated.
func (a *Agent) Free() Slots { return a.capacity.Sub(a.Occupied()) }

// DeviceOccupied is the share of a device its allocations take.
func (a *Agent) DeviceOccupied(deviceID string) Quantity {
	var sum Quantity
	for _, al := range a.allocations {
		for _, d := range al.Devices {
			if d.DeviceID == deviceID {
				sum += d.Amount
			}
		}
	}
	return sum
}

// DeviceFree is the share of a device still free (0 for an unknown device).
func (a *Agent) DeviceFree(deviceID string) Quantity {
	if _, ok := a.device(deviceID); !ok {
		return 0
	}
	return DeviceShareCapacity - a.DeviceOccupied(deviceID)
}

func (a *Agent) device(id string) (Device, bool) {
	for _, d := range a.devices {
		if d.ID == id {
			return d, true
		}
	}
	return Device{}, false
}

func (a *Agent) notFound(op string) error {
	return Errorf(op, KindNotFound, "agent has not registered")
}
