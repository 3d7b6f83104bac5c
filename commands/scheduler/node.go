package scheduler

import (
	"cmp"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// node is a Node during one Place call: its free slots and device shares
// go down as kernels are placed on it.
type node struct {
	id       string
	capacity domain.Slots
	free     domain.Slots
	devices  []NodeDevice // by id; Free goes down
	// accelerators are the device kinds the node has.
	accelerators map[domain.SlotName]bool
}

func newNode(n Node) *node {
	out := &node{
		id:           n.AgentID,
		capacity:     n.Capacity.Clone(),
		free:         n.Capacity.Sub(n.Occupied),
		devices:      slices.Clone(n.Devices),
		accelerators: map[domain.SlotName]bool{},
	}
	slices.SortFunc(out.devices, func(a, b NodeDevice) int { return cmp.Compare(a.ID, b.ID) })
	for _, d := range out.devices {
		out.accelerators[d.Kind] = true
	}
	for name, v := range n.Capacity {
		if domain.IsAccelerator(name) && v > 0 {
			out.accelerators[deviceKindFor(name)] = true
		}
	}
	return out
}

func (n *node) clone() *node {
	c := *n
	c.free = n.free.Clone()
	c.devices = slices.Clone(n.devices)
	return &c
}

// fits reports whether one kernel's slots fit, and the devices it would
// get.
func (n *node) fits(slots domain.Slots) ([]domain.DeviceShare, bool) {
	if !slots.FitsIn(n.free) {
		return nil, false
	}
	return assignDevices(slots, n.devices)
}

// take subtracts one kernel's slots and devices.
func (n *node) take(slots domain.Slots, devices []domain.DeviceShare) {
	for name, v := range slots {
		n.free[name] -= v
	}
	for _, d := range devices {
		for i := range n.devices {
			if n.devices[i].ID == d.DeviceID {
				n.devices[i].Free -= d.Amount
			}
		}
	}
}

// takeAll places every kernel on this node, one after the other; on
// failure the node may be partly taken (callers try on a clone).
func (n *node) takeAll(kernels []KernelRequest) ([]domain.KernelPlacement, bool) {
	out := make([]domain.KernelPlacement, 0, len(kernels))
	for _, k := range kernels {
		devices, ok := n.fits(k.Slots)
		if !ok {
			return nil, false
		}
		n.take(k.Slots, devices)
		out = append(out, domain.KernelPlacement{KernelID: k.KernelID, AgentID: n.id, Devices: devices})
	}
	return out, true
}

// demand is what the selector needs to know of one request (a kernel, or
// a single-node session's kernels together), computed once per request.
type demand struct {
	slots domain.Slots
	// order lists the requested slots as the dispersed selector compares
	// their free amounts: accelerators, cpu, mem, then the rest by name.
	order []domain.SlotName
	// kinds are the device kinds the request uses.
	kinds []domain.SlotName
}

func newDemand(slots domain.Slots) demand {
	d := demand{slots: slots, order: slots.Names()}
	rank := func(name domain.SlotName) int {
		switch {
		case domain.IsAccelerator(name):
			return 0
		case name == domain.SlotCPU:
			return 1
		case name == domain.SlotMem:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(d.order, func(a, b domain.SlotName) int { return cmp.Compare(rank(a), rank(b)) })
	for _, name := range d.order {
		if domain.IsAccelerator(name) && slots[name] > 0 {
			d.kinds = append(d.kinds, deviceKindFor(name))
		}
	}
	return d
}

// moreFree is the dispersed selector: whether n is a better choice than
// other for d (see Place).
func (n *node) moreFree(other *node, d demand) bool {
	if a, b := n.hasUnrequestedAccelerator(d), other.hasUnrequestedAccelerator(d); a != b {
		return !a
	}
	for _, name := range d.order {
		if c := cmp.Compare(n.free[name], other.free[name]); c != 0 {
			return c > 0
		}
	}
	return n.id < other.id
}

// hasUnrequestedAccelerator reports whether the node has accelerators of a
// kind the request does not use (a CPU-only request should leave GPU
// nodes to GPU requests).
func (n *node) hasUnrequestedAccelerator(d demand) bool {
	for kind := range n.accelerators {
		if !slices.Contains(d.kinds, kind) {
			return true
		}
	}
	return false
}

// deviceKindFor is the kind of device that serves an accelerator slot:
// fractional CUDA shares come from whole CUDA devices.
func deviceKindFor(slot domain.SlotName) domain.SlotName {
	if slot == domain.SlotCUDAShares {
		return domain.SlotCUDADevice
	}
	return slot
}
