package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AllocationRequest asks for one kernel's slots and device shares.
type AllocationRequest struct {
	KernelID  uuid.UUID
	SessionID uuid.UUID
	Slots     Slots
	Devices   []DeviceShare
}

// InsufficientCapacityError names what an allocation lacked. It is the
// cause (Err) of the KindQuotaExceeded error Allocate returns; reach it
// with errors.As.
type InsufficientCapacityError struct {
	AgentID string
	// Slots that lack free capacity, sorted, with what was asked and free.
	Slots []SlotShortfall
	// Devices that lack a free share.
	Devices []DeviceShortfall
}

// SlotShortfall: a slot asked for more than is free.
type SlotShortfall struct {
	Slot            SlotName
	Requested, Free Quantity
}

// DeviceShortfall: a device asked for more share than is free.
type DeviceShortfall struct {
	DeviceID        string
	Requested, Free Quantity
}

func (e *InsufficientCapacityError) Error() string {
	var parts []string
	for _, s := range e.Slots {
		parts = append(parts, fmt.Sprintf("%s (requested %s, free %s)", s.Slot, s.Requested, s.Free))
	}
	for _, d := range e.Devices {
		parts = append(parts, fmt.Sprintf("device %s (requested %s, free %s)", d.DeviceID, d.Requested, d.Free))
	}
	return fmt.Sprintf("agent %s lacks free capacity: %s", e.AgentID, strings.Join(parts, ", "))
}

// Allocate reserves one kernel's slots and device shares; see
// AllocateKernels.
func (a *Agent) Allocate(kernel, session uuid.UUID, slots Slots, devices []DeviceShare, at time.Time) ([]Event, error) {
	return a.AllocateKernels([]AllocationRequest{{KernelID: kernel, SessionID: session, Slots: slots, Devices: devices}}, at)
}

// AllocateKernels reserves several kernels' slots and device shares at
// once (all or none), one agent.allocated event each.
//
// It refuses with KindQuotaExceeded (cause *InsufficientCapacityError,
// naming every short slot and device) when a request does not fit in what
// is free: capacity minus the sum of allocations for slots, a device's
// share capacity (1.0) minus its allocated shares for devices. A kernel
// that already holds exactly this allocation is skipped (an identical
// re-allocation is idempotent); a kernel holding a different one is
// KindConflict. A lost agent refuses everything (KindConflict); an agent
// that never registered is KindNotFound; a device the agent lacks, or of
// the wrong kind for the slot, is KindInvalid.
func (a *Agent) AllocateKernels(reqs []AllocationRequest, at time.Time) ([]Event, error) {
	b := a.budget()
	return a.allocateKernels(reqs, at, &b)
}

// allocateKernels is AllocateKernels's decision against b, what is free
// on the agent (a's allocations, plus any decided since): b is reduced by
// what it allocates, and left as it was when it refuses.
func (a *Agent) allocateKernels(reqs []AllocationRequest, at time.Time, b *budget) ([]Event, error) {
	const op = "agent.allocate"
	switch {
	case !a.exists:
		return nil, a.notFound(op)
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	case len(reqs) == 0:
		return nil, Invalid(op, "kernels", "nothing to allocate")
	case a.status != AgentStatusAlive:
		return nil, Errorf(op, KindConflict, "agent %s is %s", a.id, a.status)
	}
	free := b.free
	var taken []DeviceShare // deducted from b.devices, given back on refusal
	refuse := func(err error) ([]Event, error) {
		for _, d := range taken {
			b.devices[d.DeviceID] += d.Amount
		}
		return nil, err
	}
	seen := make(map[uuid.UUID]bool, len(reqs))
	var events []Event
	for _, r := range reqs {
		slots, err := a.checkRequest(op, r)
		if err != nil {
			return refuse(err)
		}
		if seen[r.KernelID] {
			return refuse(Invalid(op, "kernel_id", "kernel %s requested twice", r.KernelID))
		}
		seen[r.KernelID] = true
		if held, ok := a.allocations[r.KernelID]; ok {
			if held.SessionID == r.SessionID && sameSlots(held.Slots, slots) && equalShares(held.Devices, r.Devices) {
				continue
			}
			return refuse(Errorf(op, KindConflict, "kernel %s already holds a different allocation on agent %s", r.KernelID, a.id))
		}
		short := &InsufficientCapacityError{AgentID: a.id}
		for _, name := range slots.Exceeding(free) {
			short.Slots = append(short.Slots, SlotShortfall{Slot: name, Requested: slots[name], Free: max(free[name], 0)})
		}
		for _, d := range sortedShares(r.Devices) {
			if d.Amount > b.devices[d.DeviceID] {
				short.Devices = append(short.Devices, DeviceShortfall{DeviceID: d.DeviceID, Requested: d.Amount, Free: max(b.devices[d.DeviceID], 0)})
			}
		}
		if len(short.Slots) > 0 || len(short.Devices) > 0 {
			return refuse(&Error{Op: op, Kind: KindQuotaExceeded, Message: fmt.Sprintf("kernel %s", r.KernelID), Err: short})
		}
		free = free.Sub(slots)
		for _, d := range r.Devices {
			b.devices[d.DeviceID] -= d.Amount
			taken = append(taken, d)
		}
		events = append(events, AgentAllocated{KernelID: r.KernelID, SessionID: r.SessionID, Slots: slots, Devices: sortedShares(r.Devices), At: at})
	}
	b.free = free
	return events, nil
}

// checkRequest validates one request against the agent's devices and
// returns its slots without zero amounts.
func (a *Agent) checkRequest(op string, r AllocationRequest) (Slots, error) {
	switch {
	case r.KernelID == uuid.Nil:
		return nil, Invalid(op, "kernel_id", "required")
	case r.SessionID == uuid.Nil:
		return nil, Invalid(op, "session_id", "required")
	}
	slots := make(Slots, len(r.Slots))
	for name, v := range r.Slots {
		if v < 0 {
			return nil, Invalid(op, "slots."+string(name), "must not be negative")
		}
		if v > 0 {
			slots[name] = v
		}
	}
	if len(slots) == 0 {
		return nil, Invalid(op, "slots", "nothing requested")
	}
	if err := checkDeviceShares(op, "devices", slots, r.Devices); err != nil {
		return nil, err
	}
	if accels := acceleratorsOf(slots); len(accels) == 1 {
		want := deviceKindFor(accels[0])
		for _, d := range r.Devices {
			dev, ok := a.device(d.DeviceID)
			if !ok {
				return nil, Invalid(op, "devices", "agent %s has no device %s", a.id, d.DeviceID)
			}
			if dev.Kind != want {
				return nil, Invalid(op, "devices", "device %s is a %s, %s needs a %s", d.DeviceID, dev.Kind, accels[0], want)
			}
		}
	}
	return slots, nil
}

// Release gives back what a kernel holds on the agent. It is idempotent:
// a kernel holding nothing returns no events.
func (a *Agent) Release(kernel uuid.UUID, reason string, at time.Time) ([]Event, error) {
	const op = "agent.release"
	switch {
	case !a.exists:
		return nil, a.notFound(op)
	case reason == "":
		return nil, Invalid(op, "reason", "required")
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	}
	held, ok := a.allocations[kernel]
	if !ok {
		return nil, nil
	}
	return []Event{AgentReleased{KernelID: kernel, SessionID: held.SessionID, Reason: reason, At: at}}, nil
}

// budget is what an agent has free: slots, and each device's share.
type budget struct {
	free    Slots
	devices map[string]Quantity
}

// budget is what Free and DeviceFree say, in one pass over the
// allocations.
func (a *Agent) budget() budget {
	b := budget{free: a.Free(), devices: make(map[string]Quantity, len(a.devices))}
	for _, d := range a.devices {
		b.devices[d.ID] = DeviceShareCapacity
	}
	for _, al := range a.allocations {
		for _, d := range al.Devices {
			if _, known := b.devices[d.DeviceID]; known {
				b.devices[d.DeviceID] -= d.Amount
			}
		}
	}
	return b
}
