package domain

import (
	"github.com/google/uuid"
)

// KernelRole tells a session's main kernel from the others.
type KernelRole string

const (
	// KernelMain is the first kernel of a session: its exit code is the
	// session's.
	KernelMain KernelRole = "main"
	// KernelSub is every other kernel of a cluster session.
	KernelSub KernelRole = "sub"
)

// KernelPlacement is where the scheduler put one kernel: the agent and the
// devices (with amounts) it takes there.
type KernelPlacement struct {
	KernelID uuid.UUID     `json:"kernel_id"`
	AgentID  string        `json:"agent_id"`
	Devices  []DeviceShare `json:"devices,omitempty"`
}

// Kernel is one container of a session. Kernels share the session status
// vocabulary (PENDING ... RUNNING, TERMINATED, CANCELLED, ERROR); a
// kernel's status is what its agent reported, the session's is derived
// from all of them. Read it through its methods; it is a copy.
type Kernel struct {
	id           uuid.UUID
	role         KernelRole
	requested    Slots
	agentID      string
	devices      []DeviceShare
	containerID  string
	status       SessionStatus
	statusReason string
	exitCode     *int
	servicePorts []PublishedPort
	// pull is the latest image pull progress; appsReady the apps that
	// answered (see kernel_phases.go).
	pull      *PullProgress
	appsReady []AppReady
}

func (k Kernel) ID() uuid.UUID         { return k.id }
func (k Kernel) Role() KernelRole      { return k.role }
func (k Kernel) Requested() Slots      { return k.requested.Clone() }
func (k Kernel) AgentID() string       { return k.agentID }
func (k Kernel) ContainerID() string   { return k.containerID }
func (k Kernel) Status() SessionStatus { return k.status }
func (k Kernel) StatusReason() string  { return k.statusReason }

// ServicePorts returns the ports the agent published for the kernel's
// apps when it started (none before).
func (k Kernel) ServicePorts() []PublishedPort {
	return append([]PublishedPort(nil), k.servicePorts...)
}

// Devices returns the device shares assigned to the kernel, by device id.
func (k Kernel) Devices() []DeviceShare { return append([]DeviceShare(nil), k.devices...) }

// ExitCode returns the exit code the agent reported, if any.
func (k Kernel) ExitCode() (int, bool) {
	if k.exitCode == nil {
		return 0, false
	}
	return *k.exitCode, true
}

// Placement returns where the kernel was scheduled (zero before).
func (k Kernel) Placement() KernelPlacement {
	return KernelPlacement{KernelID: k.id, AgentID: k.agentID, Devices: k.Devices()}
}

// clone returns a deep copy, so decisions can fold tentative events
// without touching the aggregate.
func (k Kernel) clone() Kernel {
	c := k
	c.requested = k.requested.Clone()
	c.devices = append([]DeviceShare(nil), k.devices...)
	c.servicePorts = append([]PublishedPort(nil), k.servicePorts...)
	if k.exitCode != nil {
		code := *k.exitCode
		c.exitCode = &code
	}
	return c
}
