package protocol

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// KernelCreate asks an agent to run a kernel (kernel.create, manager →
// agent). It is self-contained: built by NewKernelCreate from the
// agent.allocated event and the session's session.requested event.
type KernelCreate struct {
	KernelID  uuid.UUID `json:"kernel_id"`
	SessionID uuid.UUID `json:"session_id"`
	// AgentID is the agent that must run it (the topic's).
	AgentID string `json:"agent_id"`
	// Role is main or sub (domain.KernelRole).
	Role domain.KernelRole `json:"role,omitempty"`
	// Image is the image reference; the agent pulls it when absent.
	Image string `json:"image"`
	// Command is the argument vector; empty runs the image's default
	// command.
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Slots are the kernel's allocated slots: cpu becomes its CPU limit,
	// mem its memory limit (swap included).
	Slots domain.Slots `json:"slots"`
	// Devices are the accelerator devices (and amounts) allocated to it.
	Devices []domain.DeviceShare `json:"devices,omitempty"`
	// Mounts are bind mounts (vfolders) with their permission.
	Mounts []Mount `json:"mounts,omitempty"`
	// ServicePorts are the container ports the agent publishes (on host
	// ports of its own, on its loopback) and serves the kernel's apps
	// from: the image's service ports plus the session's pre-opened ports
	// (domain.SessionServicePorts).
	ServicePorts []domain.ServicePort `json:"service_ports,omitempty"`
	// AllocationRevision is the revision of the agent.allocated event in
	// the agent's stream (agent-<agent id>); KernelSync compares it with its
	// AsOfRevision to tell an orphan from a kernel allocated after the sync
	// was read.
	AllocationRevision int64 `json:"allocation_revision"`
	// At is when the kernel was allocated.
	At time.Time `json:"at"`
}

// Mount bind-mounts a host path into the kernel's container.
type Mount struct {
	Source   string `json:"source"` // absolute host path
	Target   string `json:"target"` // absolute path in the container
	ReadOnly bool   `json:"read_only,omitempty"`
}

func (KernelCreate) MessageType() string { return TypeKernelCreate }
func (m KernelCreate) Agent() string     { return m.AgentID }
func (m KernelCreate) Kernel() uuid.UUID { return m.KernelID }

// Validate reports every problem at once.
func (m KernelCreate) Validate() error {
	c := newChecker(TypeKernelCreate)
	c.id("kernel_id", m.KernelID)
	c.id("session_id", m.SessionID)
	c.agentID(m.AgentID)
	if strings.TrimSpace(m.Image) == "" {
		c.bad("image", "required")
	}
	c.env("env", m.Env)
	c.slots("slots", m.Slots)
	if !m.Slots[domain.SlotMem].IsWhole() {
		c.bad("slots.mem", "must be a whole number of bytes")
	}
	c.shares("devices", m.Devices)
	c.mounts("mounts", m.Mounts)
	c.servicePorts("service_ports", m.ServicePorts)
	if m.AllocationRevision < 0 {
		c.bad("allocation_revision", "must not be negative")
	}
	c.time("at", m.At)
	return c.err()
}

// ShellCommand is the argument vector that runs a session's command (a
// shell command line, domain.SessionRequested.Command): /bin/sh -c
// command; nil for an empty command (the image's default).
func ShellCommand(command string) []string {
	if strings.TrimSpace(command) == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", command}
}

// NewKernelCreate builds the kernel.create for an allocation: alloc is the
// agent.allocated event recorded at revision allocRevision in the stream
// of agent agentID, req the session.requested event of alloc's session
// (image, command, environment, pre-opened ports and the kernel's role).
// The command runs as ShellCommand(req.Command). The service ports are
// the session's pre-opened ports only: the caller adds the image's
// (domain.SessionServicePorts), which the request does not carry. It refuses (domain.ErrInvalid) an allocation
// of another session or of a kernel req does not name, and a result that
// does not validate.
func NewKernelCreate(agentID string, alloc domain.AgentAllocated, allocRevision int64, req domain.SessionRequested) (KernelCreate, error) {
	const op = "protocol.new-kernel-create"
	if alloc.SessionID != req.SessionID {
		return KernelCreate{}, domain.Invalid(op, "session_id", "allocation of session %s, request of session %s", alloc.SessionID, req.SessionID)
	}
	i := slices.IndexFunc(req.Kernels, func(k domain.KernelSpec) bool { return k.KernelID == alloc.KernelID })
	if i < 0 {
		return KernelCreate{}, domain.Invalid(op, "kernel_id", "kernel %s is not in session %s", alloc.KernelID, req.SessionID)
	}
	var env map[string]string
	if len(req.Env) > 0 {
		env = make(map[string]string, len(req.Env))
		for k, v := range req.Env {
			env[k] = v
		}
	}
	m := KernelCreate{
		KernelID:           alloc.KernelID,
		SessionID:          alloc.SessionID,
		AgentID:            agentID,
		Role:               req.Kernels[i].Role,
		Image:              req.Image,
		Command:            ShellCommand(req.Command),
		Env:                env,
		Slots:              alloc.Slots.Clone(),
		Devices:            append([]domain.DeviceShare(nil), alloc.Devices...),
		ServicePorts:       domain.SessionServicePorts(nil, req.PreopenPorts),
		AllocationRevision: allocRevision,
		At:                 alloc.At,
	}
	if err := m.Validate(); err != nil {
		return KernelCreate{}, fmt.Errorf("%s: %w", op, err)
	}
	return m, nil
}
