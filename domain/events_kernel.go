package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the kernel events. A kernel lives inside its session, so
// these are recorded in the session's stream, next to the session event
// (if any) that the kernel's change causes, in the same append.
const (
	TypeKernelPreparing  = "kernel.preparing"
	TypeKernelPulling    = "kernel.pulling"
	TypeKernelPrepared   = "kernel.prepared"
	TypeKernelCreating   = "kernel.creating"
	TypeKernelRunning    = "kernel.running"
	TypeKernelExited     = "kernel.exited"
	TypeKernelTerminated = "kernel.terminated"
	TypeKernelErrored    = "kernel.errored"
)

// KernelPreparing: the agent started preparing the kernel.
type KernelPreparing struct {
	KernelID uuid.UUID `json:"kernel_id"`
	At       time.Time `json:"at"`
}

// KernelPulling: the agent is pulling the kernel's image.
type KernelPulling struct {
	KernelID uuid.UUID `json:"kernel_id"`
	At       time.Time `json:"at"`
}

// KernelPrepared: image and mounts are ready.
type KernelPrepared struct {
	KernelID uuid.UUID `json:"kernel_id"`
	At       time.Time `json:"at"`
}

// KernelCreating: the agent is creating the kernel's container.
type KernelCreating struct {
	KernelID uuid.UUID `json:"kernel_id"`
	At       time.Time `json:"at"`
}

// KernelRunning: the kernel's container runs.
type KernelRunning struct {
	KernelID    uuid.UUID `json:"kernel_id"`
	ContainerID string    `json:"container_id"`
	// ServicePorts are the ports the agent published for the kernel's
	// apps (optional: older events and kernels without apps have none).
	ServicePorts []PublishedPort `json:"service_ports,omitempty"`
	At           time.Time       `json:"at"`
}

// KernelExited: the kernel's process ended with an exit code; the kernel is
// TERMINATED.
type KernelExited struct {
	KernelID uuid.UUID `json:"kernel_id"`
	ExitCode int       `json:"exit_code"`
	// Reason is task-finished (0) or task-failed, or the session's
	// terminating reason when it was being torn down.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// KernelTerminated: the kernel's container is gone without an exit report;
// the kernel is TERMINATED.
type KernelTerminated struct {
	KernelID uuid.UUID `json:"kernel_id"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// KernelErrored: the kernel failed (e.g. failed-to-start); its session is
// in ERROR from the same append on.
type KernelErrored struct {
	KernelID uuid.UUID `json:"kernel_id"`
	Reason   string    `json:"reason"`
	Message  string    `json:"message,omitempty"`
	At       time.Time `json:"at"`
}

func (KernelPreparing) EventType() string  { return TypeKernelPreparing }
func (KernelPulling) EventType() string    { return TypeKernelPulling }
func (KernelPrepared) EventType() string   { return TypeKernelPrepared }
func (KernelCreating) EventType() string   { return TypeKernelCreating }
func (KernelRunning) EventType() string    { return TypeKernelRunning }
func (KernelExited) EventType() string     { return TypeKernelExited }
func (KernelTerminated) EventType() string { return TypeKernelTerminated }
func (KernelErrored) EventType() string    { return TypeKernelErrored }
