package protocol

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// KernelStatus is an agent's report about one of its kernels
// (kernel.status, agent → manager). Its fields map one to one onto
// commands.ReportKernelStatus; ObservedAt is when the agent saw it (the
// command takes its own time).
type KernelStatus struct {
	SessionID uuid.UUID `json:"session_id"`
	KernelID  uuid.UUID `json:"kernel_id"`
	AgentID   string    `json:"agent_id"`
	// Phase is preparing, pulling, prepared, creating, running, exited,
	// removed or failed (domain.KernelPhase).
	Phase domain.KernelPhase `json:"phase"`
	// ContainerID is the runtime's container id; required when running.
	ContainerID string `json:"container_id,omitempty"`
	// ExitCode is the kernel process's exit code when exited.
	ExitCode int `json:"exit_code"`
	// Reason is required when failed (domain.ReasonFailedToStart); other
	// phases may carry one for the logs.
	Reason string `json:"reason,omitempty"`
	// Message explains a failure to humans.
	Message string `json:"message,omitempty"`
	// ServicePorts are the ports the agent published for the kernel's
	// apps, when running (the host ports are on the agent's loopback).
	ServicePorts []domain.PublishedPort `json:"service_ports,omitempty"`
	// Pull is how far the image pull is, in a pulling report (agents send
	// one at most every few seconds while a pull moves).
	Pull *domain.PullProgress `json:"pull,omitempty"`
	// ReadyApps are the apps (service port names) that answered the
	// agent's probe so far, in a running report.
	ReadyApps  []string  `json:"ready_apps,omitempty"`
	ObservedAt time.Time `json:"observed_at"`
}

func (KernelStatus) MessageType() string { return TypeKernelStatus }
func (m KernelStatus) Agent() string     { return m.AgentID }
func (m KernelStatus) Kernel() uuid.UUID { return m.KernelID }

// knownPhases are the phases a report may carry.
var knownPhases = map[domain.KernelPhase]bool{
	domain.PhasePreparing: true, domain.PhasePulling: true, domain.PhasePrepared: true,
	domain.PhaseCreating: true, domain.PhaseRunning: true, domain.PhaseExited: true,
	domain.PhaseRemoved: true, domain.PhaseFailed: true,
}

// Validate reports every problem at once.
func (m KernelStatus) Validate() error {
	c := newChecker(TypeKernelStatus)
	c.id("session_id", m.SessionID)
	c.id("kernel_id", m.KernelID)
	c.agentID(m.AgentID)
	switch {
	case !knownPhases[m.Phase]:
		c.bad("phase", "unknown kernel phase %q", m.Phase)
	case m.Phase == domain.PhaseRunning && m.ContainerID == "":
		c.bad("container_id", "required when running")
	case m.Phase == domain.PhaseFailed && m.Reason == "":
		c.bad("reason", "required when failed")
	}
	if err := domain.CheckPublishedPorts(c.op, "service_ports", m.ServicePorts); err != nil {
		c.errs = append(c.errs, err)
	}
	if err := domain.CheckPullProgress(c.op, "pull", m.Pull); err != nil {
		c.errs = append(c.errs, err)
	}
	if m.Pull != nil && m.Phase != domain.PhasePulling {
		c.bad("pull", "only in a pulling report")
	}
	if len(m.ReadyApps) > 0 && m.Phase != domain.PhaseRunning {
		c.bad("ready_apps", "only in a running report")
	}
	for i, name := range m.ReadyApps {
		if !slices.ContainsFunc(m.ServicePorts, func(p domain.PublishedPort) bool { return p.Name == name }) {
			c.bad(fmt.Sprintf("ready_apps[%d]", i), "%q is not one of service_ports", name)
		}
	}
	c.time("observed_at", m.ObservedAt)
	return c.err()
}
