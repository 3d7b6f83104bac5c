package scheduler

import (
	"cmp"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// shareStep is the granularity of cuda.shares: 0.01 of a device.
const shareStep = domain.QuantityScale / 100

// acceleratorOf returns the accelerator slot a kernel asks for, if any
// (requests carry at most one: they are mutually exclusive).
func acceleratorOf(slots domain.Slots) (domain.SlotName, domain.Quantity, bool) {
	for _, name := range slots.Names() {
		if domain.IsAccelerator(name) && slots[name] > 0 {
			return name, slots[name], true
		}
	}
	return "", 0, false
}

// assignDevices picks the concrete devices for a kernel's accelerator
// request among devices (sorted by id, with their free shares), or reports
// that they cannot serve it. A request without accelerators needs none.
//
//   - cuda.shares up to one device's capacity go on one device: the one
//     with the least free share that still holds them (best fit, so that
//     whole devices stay whole for whole-device requests, against
//     fragmentation), the smaller id on a tie.
//   - cuda.shares above one device are split into near-equal parts (in
//     steps of 0.01) over the fewest devices that hold them, each part on
//     its best-fitting device.
//   - Whole-device slots (cuda.device, MIG profiles, other accelerators)
//     take that many devices of the slot's kind with nothing allocated on
//     them, by id.
//
// The shares returned are sorted by device id, as events carry them.
func assignDevices(slots domain.Slots, devices []NodeDevice) ([]domain.DeviceShare, bool) {
	slot, amount, ok := acceleratorOf(slots)
	if !ok {
		return nil, true
	}
	var out []domain.DeviceShare
	if slot == domain.SlotCUDAShares {
		out, ok = assignShares(amount, devicesOfKind(devices, domain.SlotCUDADevice))
	} else {
		out, ok = assignWhole(amount, devicesOfKind(devices, slot))
	}
	if !ok {
		return nil, false
	}
	slices.SortFunc(out, func(a, b domain.DeviceShare) int { return cmp.Compare(a.DeviceID, b.DeviceID) })
	return out, true
}

func devicesOfKind(devices []NodeDevice, kind domain.SlotName) []NodeDevice {
	var out []NodeDevice
	for _, d := range devices {
		if d.Kind == kind && d.Free > 0 {
			out = append(out, d)
		}
	}
	return out
}

// assignWhole takes amount whole, entirely free devices.
func assignWhole(amount domain.Quantity, devices []NodeDevice) ([]domain.DeviceShare, bool) {
	if !amount.IsWhole() {
		return nil, false
	}
	want := int(amount.Whole())
	var out []domain.DeviceShare
	for _, d := range devices {
		if len(out) == want {
			break
		}
		if d.Free >= domain.DeviceShareCapacity {
			out = append(out, domain.DeviceShare{DeviceID: d.ID, Amount: domain.DeviceShareCapacity})
		}
	}
	return out, len(out) == want
}

// assignShares places a fractional request on the fewest devices.
func assignShares(amount domain.Quantity, devices []NodeDevice) ([]domain.DeviceShare, bool) {
	if amount <= 0 || amount%shareStep != 0 {
		return nil, false
	}
	first := int((amount + domain.DeviceShareCapacity - 1) / domain.DeviceShareCapacity)
	if amount <= domain.DeviceShareCapacity {
		return fitParts([]domain.Quantity{amount}, devices)
	}
	for n := first; n <= len(devices) && domain.Quantity(n)*shareStep <= amount; n++ {
		if out, ok := fitParts(splitShares(amount, n), devices); ok {
			return out, true
		}
	}
	return nil, false
}

// splitShares divides amount into n near-equal parts in steps of 0.01,
// largest first.
func splitShares(amount domain.Quantity, n int) []domain.Quantity {
	steps := int64(amount / shareStep)
	base, extra := steps/int64(n), steps%int64(n)
	parts := make([]domain.Quantity, n)
	for i := range parts {
		s := base
		if int64(i) < extra {
			s++
		}
		parts[i] = domain.Quantity(s) * shareStep
	}
	return parts
}

// fitParts puts each part, largest first, on the unused device with the
// least free share that holds it.
func fitParts(parts []domain.Quantity, devices []NodeDevice) ([]domain.DeviceShare, bool) {
	used := make([]bool, len(devices))
	out := make([]domain.DeviceShare, 0, len(parts))
	for _, p := range parts {
		best := -1
		for i, d := range devices {
			if used[i] || d.Free < p {
				continue
			}
			if best < 0 || d.Free < devices[best].Free {
				best = i
			}
		}
		if best < 0 {
			return nil, false
		}
		used[best] = true
		out = append(out, domain.DeviceShare{DeviceID: devices[best].ID, Amount: p})
	}
	return out, true
}
