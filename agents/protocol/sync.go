package protocol

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// KernelSync tells an agent which kernels the manager believes are
// allocated on it (kernel.sync, manager → agent), in answer to
// agent.register. The agent removes the containers of the kernels it
// lists not, allocated at or before AsOfRevision (see the package
// documentation).
type KernelSync struct {
	AgentID string `json:"agent_id"`
	// Kernels are the kernels allocated on the agent (domain.Agent.Allocations).
	Kernels []uuid.UUID `json:"kernels"`
	// AsOfRevision is the revision of the agent's stream the list was read
	// at (domain.Agent.Revision).
	AsOfRevision int64 `json:"as_of_revision"`
	// At is when the manager read the list.
	At time.Time `json:"at"`
}

func (KernelSync) MessageType() string { return TypeKernelSync }
func (m KernelSync) Agent() string     { return m.AgentID }

// Allocated reports whether the list names kernel.
func (m KernelSync) Allocated(kernel uuid.UUID) bool { return slices.Contains(m.Kernels, kernel) }

// Validate reports every problem at once.
func (m KernelSync) Validate() error {
	c := newChecker(TypeKernelSync)
	c.agentID(m.AgentID)
	for i, k := range m.Kernels {
		c.id(fmt.Sprintf("kernels[%d]", i), k)
	}
	if m.AsOfRevision < 0 {
		c.bad("as_of_revision", "must not be negative")
	}
	c.time("at", m.At)
	return c.err()
}
