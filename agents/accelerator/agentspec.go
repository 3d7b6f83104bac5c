package accelerator

import (
	"slices"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// DomainDevices returns the devices the agent aggregate registers: every
// allocatable device (whole GPUs not in MIG mode as cuda.device, MIG
// devices as their profile slot), by id as domain.AgentSpec keeps them. A
// GPU in MIG mode is left out: it cannot be assigned, its MIG devices can.
func (inv Inventory) DomainDevices() []domain.Device {
	var out []domain.Device
	for _, d := range inv.Devices {
		if !d.Allocatable() {
			continue
		}
		out = append(out, domain.Device{ID: d.ID, Kind: d.Kind, Model: d.Model, Memory: d.MemoryBytes})
	}
	slices.SortFunc(out, func(a, b domain.Device) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// AgentSpec returns what the agent registers with (domain.Agent.Register):
// host holds the slots that do not come from accelerators (cpu and mem at
// least); the inventory's Capacity is added to them, replacing any slot of
// the same name, and its DomainDevices are the devices.
func (inv Inventory) AgentSpec(id, architecture string, host domain.Slots) domain.AgentSpec {
	capacity := host.Clone()
	for name, v := range inv.Capacity() {
		capacity[name] = v
	}
	return domain.AgentSpec{ID: id, Architecture: architecture, Capacity: capacity, Devices: inv.DomainDevices()}
}
