package readapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/agents"
)

const opListAgents = "agent.list"

// agentView is an agent on the wire (docs/api/openapi.yaml, Agent).
type agentView struct {
	ID           string             `json:"id"`
	Architecture string             `json:"architecture"`
	Status       domain.AgentStatus `json:"status"`
	Capacity     domain.Slots       `json:"capacity"`
	Occupied     domain.Slots       `json:"occupied"`
	Free         domain.Slots       `json:"free"`
	// LargestFreeBlock is, per slot, the most one kernel could be given on
	// the agent now: the largest free share of one GPU for cuda.shares,
	// the entirely free devices for a device slot (cuda.device, a MIG
	// profile), capacity − occupied otherwise.
	LargestFreeBlock domain.Slots `json:"largest_free_block"`
	// Slots lists every slot with its capacity, occupancy, free amount and
	// largest free block, by slot name (devices counted as in
	// LargestFreeBlock).
	Slots        []agentSlotView   `json:"slots"`
	Devices      []agentDeviceView `json:"devices"`
	Allocations  int               `json:"allocations"`
	RegisteredAt time.Time         `json:"registered_at"`
	LastSeenAt   time.Time         `json:"last_seen_at"`
	LostAt       *time.Time        `json:"lost_at,omitempty"`
	Position     uint64            `json:"position"`
}

// agentSlotView is one slot of an agent, amounts as decimals (bytes for
// memory), as in slots objects.
type agentSlotView struct {
	Slot             domain.SlotName `json:"slot"`
	Capacity         string          `json:"capacity"`
	Occupied         string          `json:"occupied"`
	Free             string          `json:"free"`
	LargestFreeBlock string          `json:"largest_free_block"`
}

// agentDeviceView is one accelerator of an agent and its allocated share.
type agentDeviceView struct {
	ID       string          `json:"id"`
	Kind     domain.SlotName `json:"kind"`
	Model    string          `json:"model,omitempty"`
	Memory   int64           `json:"memory,omitempty"`
	Occupied string          `json:"occupied"`
}

// listAgentsResponse is the answer of GET /v1/agents, agents by id.
type listAgentsResponse struct {
	Items []agentView `json:"items"`
}

// listAgents handles GET /v1/agents?status=alive|disconnected|lost.
func (a *api) listAgents(c *fiber.Ctx) error {
	if _, err := CallerOf(c); err != nil {
		return err
	}
	f := agents.Filter{Status: domain.AgentStatus(c.Query("status"))}
	if err := a.WaitForPosition(c, opListAgents); err != nil {
		return err
	}
	list, err := a.Agents.ListAgents(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := listAgentsResponse{Items: make([]agentView, len(list))}
	for i, ag := range list {
		v := agentView{
			ID: ag.ID, Architecture: ag.Architecture, Status: ag.Status,
			Capacity: nonNilSlots(ag.Capacity), Occupied: nonNilSlots(ag.Occupied), Free: nonNilSlots(ag.Free),
			Devices: make([]agentDeviceView, len(ag.Devices)), Allocations: ag.Allocations,
			RegisteredAt: ag.RegisteredAt, LastSeenAt: ag.LastSeenAt, LostAt: ag.LostAt, Position: ag.Position,
		}
		room := roomOf(ag)
		v.LargestFreeBlock = room.blocks()
		for _, slot := range v.LargestFreeBlock.Names() {
			v.Slots = append(v.Slots, agentSlotView{Slot: slot, Capacity: ag.Capacity[slot].String(),
				Occupied: ag.Occupied[slot].String(), Free: ag.Free[slot].String(), LargestFreeBlock: v.LargestFreeBlock[slot].String()})
		}
		v.Slots = nonNil(v.Slots)
		for j, d := range ag.Devices {
			v.Devices[j] = agentDeviceView{ID: d.ID, Kind: d.Kind, Model: d.Model, Memory: d.Memory, Occupied: d.Occupied}
		}
		out.Items[i] = v
	}
	return c.JSON(out)
}
