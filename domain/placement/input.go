package placement

import (
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Input is everything one placement round decides over: the pending
// sessions, the agents with what they hold, the resource groups and the
// quota view, and the time. Place never modifies it, and the order of its
// slices does not matter (everything is ordered by ids and keys inside).
type Input struct {
	// Now is the time starts_at is compared with.
	Now time.Time
	// Sessions are the PENDING sessions to place.
	Sessions []Session
	// Agents are every agent, schedulable or not.
	Agents []Agent
	// Groups describes the resource groups. When there are none (no
	// resource-group view yet), every agent serves every session, whatever
	// group either names, under the settings of Ungrouped.
	Groups []ResourceGroup
	// Ungrouped is the settings used when Groups is empty.
	Ungrouped ResourceGroup
	// Quotas is the tenancy view: limits and occupancy per keypair, user,
	// project and domain. The zero value limits nothing.
	Quotas Quotas
}

// Session is a PENDING session as placement sees it.
type Session struct {
	ID uuid.UUID
	// AccessKey, UserID, Project and Domain are who the session belongs to;
	// the quota checks and DRF look them up in Input.Quotas.
	AccessKey string
	UserID    string
	Project   string
	Domain    string
	// ResourceGroup is the group the session asked for (ignored when
	// Input.Groups is empty).
	ResourceGroup string
	// Priority is 0..100, higher first.
	Priority int
	// EnqueuedAt and then EnqueuedSeq (e.g. the global position of its
	// session.requested event) order the queue; the id breaks what they
	// leave tied.
	EnqueuedAt  time.Time
	EnqueuedSeq uint64
	// StartsAt, when set, is the earliest time the session may start.
	StartsAt time.Time
	// Dependencies must all have finished successfully.
	Dependencies []Dependency
	// ClusterMode is single-node (the default: every kernel on one agent)
	// or multi-node.
	ClusterMode domain.ClusterMode
	// Architecture is the CPU architecture the session's image needs; empty
	// accepts any agent.
	Architecture string
	// Tries is the number of earlier rounds that failed to place it (see
	// ResourceGroup.SkipAfterTries).
	Tries int
	// Kernels in session order, main first, each with its slots.
	Kernels []Kernel
}

// Kernel is one container of a session and the slots it asks for.
type Kernel struct {
	ID    uuid.UUID
	Slots domain.Slots
}

// Dependency is a session this one waits for, and how it stands.
type Dependency struct {
	SessionID uuid.UUID
	State     DependencyState
}

// DependencyState is how a dependency stands. The zero value is
// DependencyUnfinished.
type DependencyState uint8

const (
	// DependencyUnfinished: the session has not ended yet.
	DependencyUnfinished DependencyState = iota
	// DependencySucceeded: it ended TERMINATED with the result success.
	DependencySucceeded
	// DependencyFailed: it ended any other way (failure, cancelled, error).
	DependencyFailed
	// DependencyUnknown: no such session.
	DependencyUnknown
)

// Agent is a node as placement sees it: what it offers, what is already
// occupied, and its accelerator devices.
type Agent struct {
	ID            string
	Architecture  string
	ResourceGroup string
	// Schedulable is false for an agent that must take nothing new (lost,
	// draining): it is left out (but keeps its round-robin index).
	Schedulable bool
	Capacity    domain.Slots
	Occupied    domain.Slots
	// Devices are its accelerators: whole GPUs (which also serve
	// cuda.shares) and MIG devices. A device of an unknown kind is ignored.
	Devices []Device
}

// Device is one accelerator of an agent. See GPU and MIG.
type Device struct {
	// ID is the GPU UUID or the MIG device UUID.
	ID string
	// Kind is the slot the device serves: domain.SlotCUDADevice for a whole
	// GPU (which also serves cuda.shares), a MIG profile slot such as
	// cuda.device:1g.10gb-mig, another accelerator (rocm.device, ...).
	Kind domain.SlotName
	// ShareCapacity is how many cuda.shares the device holds: 0 means
	// domain.DeviceShareCapacity (1.0); a configured quantum may differ.
	ShareCapacity domain.Quantity
	// Used is the share already allocated on it. A device that is not a
	// whole GPU (a MIG device) is either free (0) or used (anything else).
	Used domain.Quantity
}

// GPU is a whole GPU with its share capacity (0 for 1.0) and the share
// already used.
func GPU(uuid string, shareCapacity, used domain.Quantity) Device {
	return Device{ID: uuid, Kind: domain.SlotCUDADevice, ShareCapacity: shareCapacity, Used: used}
}

// MIG is a MIG device of a profile ("1g.10gb"), used or free.
func MIG(uuid, profile string, used bool) Device {
	d := Device{ID: uuid, Kind: MIGSlot(profile)}
	if used {
		d.Used = domain.DeviceShareCapacity
	}
	return d
}

// MIGSlot is the slot of a MIG profile: "1g.10gb" → cuda.device:1g.10gb-mig.
func MIGSlot(profile string) domain.SlotName {
	return domain.SlotName("cuda.device:" + profile + "-mig")
}
