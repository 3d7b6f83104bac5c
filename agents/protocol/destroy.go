package protocol

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// KernelDestroy asks an agent to stop and remove a kernel's container
// (kernel.destroy, manager → agent). The agent keeps the kernel's logs.
type KernelDestroy struct {
	KernelID  uuid.UUID `json:"kernel_id"`
	SessionID uuid.UUID `json:"session_id"`
	AgentID   string    `json:"agent_id"`
	// Reason is why (user-requested, idle-timeout, released, ...), for the
	// agent's logs.
	Reason string `json:"reason,omitempty"`
	// At is when the manager decided it.
	At time.Time `json:"at"`
}

func (KernelDestroy) MessageType() string { return TypeKernelDestroy }
func (m KernelDestroy) Agent() string     { return m.AgentID }
func (m KernelDestroy) Kernel() uuid.UUID { return m.KernelID }

// Validate reports every problem at once.
func (m KernelDestroy) Validate() error {
	c := newChecker(TypeKernelDestroy)
	c.id("kernel_id", m.KernelID)
	c.id("session_id", m.SessionID)
	c.agentID(m.AgentID)
	c.time("at", m.At)
	return c.err()
}

// NewKernelDestroy builds a kernel.destroy and validates it.
func NewKernelDestroy(agentID string, kernelID, sessionID uuid.UUID, reason string, at time.Time) (KernelDestroy, error) {
	m := KernelDestroy{KernelID: kernelID, SessionID: sessionID, AgentID: agentID, Reason: reason, At: at}
	if err := m.Validate(); err != nil {
		return KernelDestroy{}, fmt.Errorf("protocol.new-kernel-destroy: %w", err)
	}
	return m, nil
}
