package protocol

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
)

// AgentRegister announces an agent and what it offers (agent.register,
// agent → manager). The manager records it with
// commands.RegisterAgent{Spec: m.Spec()} and answers with a KernelSync.
type AgentRegister struct {
	AgentID string `json:"agent_id"`
	// Architecture is the CPU architecture images must match (x86_64,
	// aarch64).
	Architecture string `json:"architecture"`
	// Capacity is every slot the agent offers: cpu and mem from the host,
	// the accelerator slots from its devices
	// (accelerator.Inventory.AgentSpec).
	Capacity domain.Slots `json:"capacity"`
	// Devices are its accelerators, whole GPUs and MIG devices.
	Devices []domain.Device `json:"devices,omitempty"`
	// Kernels are the kernels the agent has a container for when it sends
	// this (running or not), sorted.
	Kernels []uuid.UUID `json:"kernels,omitempty"`
	// Address is the base URL of the agent's HTTP endpoint
	// (GET {address}/kernels/{kernel id}/logs); empty if it serves none.
	Address string `json:"address,omitempty"`
	// SealKey is the agent's public curve key (X...): every message the
	// manager sends it is sealed to it (Seal), so that the bus keeps no
	// readable secret. The agent keeps the private key in its data
	// directory. Required.
	SealKey string `json:"seal_key"`
	// Version is the agent's build version.
	Version string `json:"version,omitempty"`
	// StartedAt is when the agent process started: a change tells the
	// manager the agent restarted.
	StartedAt time.Time `json:"started_at"`
	// At is when the agent sent this.
	At time.Time `json:"at"`
}

func (AgentRegister) MessageType() string { return TypeAgentRegister }
func (m AgentRegister) Agent() string     { return m.AgentID }

// Spec is what commands.RegisterAgent takes.
func (m AgentRegister) Spec() domain.AgentSpec {
	return domain.AgentSpec{ID: m.AgentID, Architecture: m.Architecture, Capacity: m.Capacity.Clone(), Devices: append([]domain.Device(nil), m.Devices...), SealKey: m.SealKey}
}

// Validate reports every problem at once.
func (m AgentRegister) Validate() error {
	c := newChecker(TypeAgentRegister)
	c.agentID(m.AgentID)
	if m.Architecture == "" {
		c.bad("architecture", "required")
	}
	c.slots("capacity", m.Capacity)
	for _, name := range []domain.SlotName{domain.SlotCPU, domain.SlotMem} {
		if m.Capacity[name] <= 0 {
			c.bad("capacity."+string(name), "required and must be positive")
		}
	}
	seen := make(map[string]bool, len(m.Devices))
	for i, d := range m.Devices {
		f := fmt.Sprintf("devices[%d]", i)
		switch {
		case d.ID == "":
			c.bad(f, "id required")
		case seen[d.ID]:
			c.bad(f, "device %s listed twice", d.ID)
		}
		seen[d.ID] = true
		if d.Kind == "" {
			c.bad(f, "kind required")
		}
	}
	for i, k := range m.Kernels {
		c.id(fmt.Sprintf("kernels[%d]", i), k)
	}
	if !nkeys.IsValidPublicCurveKey(m.SealKey) {
		c.bad("seal_key", "required: the agent's public curve key (X...)")
	}
	c.address("address", m.Address)
	c.time("started_at", m.StartedAt)
	c.time("at", m.At)
	return c.err()
}
