package accelerator

import (
	"errors"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// migSlotPrefix and migSlotSuffix frame a MIG profile in its slot name:
// cuda.device:<profile>-mig.
const (
	migSlotPrefix = string(domain.SlotCUDADevice) + ":"
	migSlotSuffix = "-mig"
)

// MIGSlot returns the unique slot that serves MIG devices of a profile:
// MIGSlot("1g.10gb") is "cuda.device:1g.10gb-mig".
func MIGSlot(profile string) domain.SlotName {
	return domain.SlotName(migSlotPrefix + profile + migSlotSuffix)
}

// Device is one accelerator a node has: a whole GPU, or a MIG device carved
// out of a GPU in MIG mode.
type Device struct {
	// ID is the GPU UUID ("GPU-...") or the MIG device UUID ("MIG-...").
	ID string
	// Index is the GPU's NVML index; for a MIG device, its index among its
	// parent's MIG devices (the second number of a CDI name such as "0:1").
	Index int
	// Kind is the slot the device serves: domain.SlotCUDADevice for a whole
	// GPU (which also serves cuda.shares), MIGSlot(profile) for a MIG device.
	Kind domain.SlotName
	// Model is the product name, e.g. "NVIDIA H100 80GB HBM3" (for a MIG
	// device, the parent's name followed by "MIG <profile>").
	Model string
	// MemoryBytes is the device's total memory.
	MemoryBytes int64
	// ComputeCapability is the CUDA compute capability, e.g. "9.0".
	ComputeCapability string
	// ParentUUID is, for a MIG device, the UUID of the GPU it belongs to.
	ParentUUID string
	// MIGEnabled is set on a whole GPU in MIG mode: the GPU itself cannot be
	// allocated, its MIG devices (listed separately) can.
	MIGEnabled bool
}

// IsMIG reports whether d is a MIG device.
func (d Device) IsMIG() bool { return d.ParentUUID != "" }

// Allocatable reports whether d can be assigned to a kernel: a whole GPU
// not in MIG mode, or a MIG device.
func (d Device) Allocatable() bool { return d.IsMIG() || !d.MIGEnabled }

// MIGProfile returns the MIG profile of a MIG device ("1g.10gb"), "" for a
// whole GPU.
func (d Device) MIGProfile() string {
	if !d.IsMIG() || !domain.IsMIGSlot(d.Kind) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(d.Kind), migSlotPrefix), migSlotSuffix)
}

// Inventory is every accelerator device a node has, in discovery order:
// each GPU, then the MIG devices of a GPU in MIG mode.
type Inventory struct {
	Devices []Device
}

// Lookup returns the device with the given id.
func (inv Inventory) Lookup(id string) (Device, bool) {
	for _, d := range inv.Devices {
		if d.ID == id {
			return d, true
		}
	}
	return Device{}, false
}

// Allocatable returns the devices a kernel can be given (see
// Device.Allocatable), in inventory order.
func (inv Inventory) Allocatable() []Device {
	var out []Device
	for _, d := range inv.Devices {
		if d.Allocatable() {
			out = append(out, d)
		}
	}
	return out
}

// Capacity returns the slots the devices add to a node's capacity:
//
//   - cuda.device: the number of whole GPUs not in MIG mode;
//   - cuda.shares: the same number, a GPU's share capacity being 1.0
//     (domain.DeviceShareCapacity);
//   - cuda.mem: the memory of those GPUs, in bytes;
//   - one unique slot per MIG profile (cuda.device:<profile>-mig), counting
//     the MIG devices of that profile.
//
// A GPU in MIG mode adds nothing itself (its MIG devices do). A node
// without accelerators has an empty (non-nil) Slots.
func (inv Inventory) Capacity() domain.Slots {
	capacity := domain.Slots{}
	for _, d := range inv.Devices {
		switch {
		case d.IsMIG():
			capacity[d.Kind] += domain.Units(1)
		case d.MIGEnabled:
		default:
			capacity[domain.SlotCUDADevice] += domain.Units(1)
			capacity[domain.SlotCUDAShares] += domain.DeviceShareCapacity
			capacity[domain.SlotCUDAMem] += domain.Quantity(d.MemoryBytes * domain.QuantityScale)
		}
	}
	return capacity
}

// Validate reports every inconsistency of the inventory at once: empty or
// repeated ids, kinds that are not a device slot, negative memory, MIG
// devices whose parent is missing or not in MIG mode.
func (inv Inventory) Validate() error {
	const op = "accelerator.inventory"
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, domain.Invalid(op, field, format, args...))
	}
	byID := make(map[string]Device, len(inv.Devices))
	for _, d := range inv.Devices {
		switch {
		case d.ID == "":
			bad("devices.id", "a device id is empty")
			continue
		case byID[d.ID].ID != "":
			bad("devices.id", "device %s listed twice", d.ID)
		}
		byID[d.ID] = d
		switch {
		case d.MemoryBytes < 0:
			bad("devices.memory", "device %s: memory must not be negative", d.ID)
		case d.IsMIG() && !domain.IsMIGSlot(d.Kind):
			bad("devices.kind", "MIG device %s: kind %q is not a MIG profile slot", d.ID, d.Kind)
		case d.IsMIG() && d.MIGEnabled:
			bad("devices.mig_enabled", "MIG device %s cannot itself be in MIG mode", d.ID)
		case !d.IsMIG() && d.Kind != domain.SlotCUDADevice:
			bad("devices.kind", "GPU %s: kind %q is not %s", d.ID, d.Kind, domain.SlotCUDADevice)
		}
	}
	for _, d := range inv.Devices {
		if !d.IsMIG() {
			continue
		}
		parent, ok := byID[d.ParentUUID]
		switch {
		case !ok:
			bad("devices.parent", "MIG device %s: parent %s is not in the inventory", d.ID, d.ParentUUID)
		case parent.IsMIG() || !parent.MIGEnabled:
			bad("devices.parent", "MIG device %s: parent %s is not a GPU in MIG mode", d.ID, d.ParentUUID)
		}
	}
	return errors.Join(errs...)
}

// Utilization is how busy one device is, as the driver last sampled it.
type Utilization struct {
	DeviceID string
	// GPUPercent is the share of the last sample period a kernel ran.
	GPUPercent uint32
	// MemoryPercent is the share of it device memory was read or written.
	MemoryPercent uint32
}
