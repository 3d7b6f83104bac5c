package agents

import (
	"time"

	"github.com/cairnhq/cairn/domain"
)

// Agent is one agent as the read model shows it.
type Agent struct {
	ID           string             `json:"id"`
	Architecture string             `json:"architecture"`
	Status       domain.AgentStatus `json:"status"`
	// Capacity is what the agent offers; Occupied the sum of its
	// allocations; Free the difference, slot by slot (negative when a
	// re-registration shrank the capacity under what is allocated).
	Capacity domain.Slots `json:"capacity"`
	Occupied domain.Slots `json:"occupied"`
	Free     domain.Slots `json:"free"`
	// Devices are the agent's accelerators, by id, with the share of each
	// that is allocated.
	Devices []Device `json:"devices"`
	// Allocations is the number of kernels allocated on the agent.
	Allocations  int        `json:"allocations"`
	RegisteredAt time.Time  `json:"registered_at"`
	LastSeenAt   time.Time  `json:"last_seen_at"`
	LostAt       *time.Time `json:"lost_at,omitempty"`
	// Position is the log position of the last event of the agent that
	// the row reflects.
	Position uint64 `json:"position"`
}

// Device is one accelerator of an agent.
type Device struct {
	domain.Device
	// Occupied is the allocated share of the device, as a decimal ("0",
	// "0.5", "1").
	Occupied string `json:"occupied"`
}
