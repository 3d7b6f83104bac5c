package readapi

import (
	"slices"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/agents"
)

// agentRoom is what one agent has free now, as placement counts it: the
// slots (capacity − occupied) and, per device kind, the free share of each
// device (1 for an entirely free device).
type agentRoom struct {
	id           string
	architecture string
	schedulable  bool
	capacity     domain.Slots
	free         domain.Slots
	devices      map[domain.SlotName][]domain.Quantity
}

// roomOf reads an agent of the read model. Only an alive agent takes
// anything new (the scheduler's rule: disconnected and lost ones do not).
func roomOf(a agents.Agent) agentRoom {
	r := agentRoom{id: a.ID, architecture: a.Architecture, schedulable: a.Status == domain.AgentStatusAlive,
		capacity: a.Capacity, free: a.Free, devices: map[domain.SlotName][]domain.Quantity{}}
	for _, d := range a.Devices {
		used, err := domain.ParseQuantity(d.Occupied, domain.SlotCount)
		if err != nil {
			used = domain.DeviceShareCapacity // unreadable: counted as taken, never as room
		}
		r.devices[d.Kind] = append(r.devices[d.Kind], max(domain.DeviceShareCapacity-used, 0))
	}
	return r
}

// block is the largest amount of slot that one kernel could be given on
// the agent now:
//   - cuda.shares: the largest free share of one GPU (a request of up to
//     one GPU goes on one device);
//   - a whole-device slot (cuda.device, rocm.device, a MIG profile): the
//     number of its devices with nothing allocated;
//   - any other slot: capacity − occupied.
func (r agentRoom) block(slot domain.SlotName) domain.Quantity {
	switch {
	case slot == domain.SlotCUDAShares:
		return slices.Max(append([]domain.Quantity{0}, r.devices[domain.SlotCUDADevice]...))
	case r.isDeviceSlot(slot):
		return domain.Units(int64(r.wholeFree(slot)))
	}
	return max(r.free[slot], 0)
}

// total is all of slot free on the agent, however split: the shares free
// on all its GPUs, its entirely free devices, or capacity − occupied.
func (r agentRoom) total(slot domain.SlotName) domain.Quantity {
	switch {
	case slot == domain.SlotCUDAShares:
		var sum domain.Quantity
		for _, f := range r.devices[domain.SlotCUDADevice] {
			sum += f
		}
		return sum
	case r.isDeviceSlot(slot):
		return domain.Units(int64(r.wholeFree(slot)))
	}
	return max(r.free[slot], 0)
}

// biggest is the largest amount of slot one kernel could ever get on the
// agent (nothing allocated).
func (r agentRoom) biggest(slot domain.SlotName) domain.Quantity {
	switch {
	case slot == domain.SlotCUDAShares:
		if len(r.devices[domain.SlotCUDADevice]) > 0 {
			return domain.DeviceShareCapacity
		}
		return 0
	case r.isDeviceSlot(slot):
		return domain.Units(int64(len(r.devices[slot])))
	}
	return r.capacity[slot]
}

// isDeviceSlot reports whether slot is served by whole devices of the
// agent (it registered devices of that kind).
func (r agentRoom) isDeviceSlot(slot domain.SlotName) bool {
	_, ok := r.devices[slot]
	return ok || domain.IsMIGSlot(slot) || (domain.IsAccelerator(slot) && slot != domain.SlotCUDAShares)
}

func (r agentRoom) wholeFree(slot domain.SlotName) int {
	n := 0
	for _, f := range r.devices[slot] {
		if f == domain.DeviceShareCapacity {
			n++
		}
	}
	return n
}

// blocks is the agent's largest free block for every slot it offers and
// every device kind it has.
func (r agentRoom) blocks() domain.Slots {
	out := domain.Slots{}
	for slot := range r.capacity {
		out[slot] = r.block(slot)
	}
	for kind := range r.devices {
		out[kind] = r.block(kind)
	}
	if _, ok := r.devices[domain.SlotCUDADevice]; ok {
		out[domain.SlotCUDAShares] = r.block(domain.SlotCUDAShares)
	}
	return out
}
