package accelerator

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// Environment variables ContainerDevices sets.
const (
	// EnvVisibleDevices tells the NVIDIA container toolkit which GPUs to
	// inject: a comma-separated list of UUIDs, or "void" for none.
	EnvVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
	// EnvMPSActiveThreadPercentage caps the share of a GPU's threads an MPS
	// client may use (1-100), on every device it sees.
	EnvMPSActiveThreadPercentage = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
	// EnvMPSPinnedDeviceMemLimit caps an MPS client's device memory, per
	// device ordinal: "0=40960M,1=20480M".
	EnvMPSPinnedDeviceMemLimit = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
	// EnvCUDADeviceOrder makes CUDA number devices in PCI bus order, the
	// order EnvMPSPinnedDeviceMemLimit's ordinals are computed in.
	EnvCUDADeviceOrder = "CUDA_DEVICE_ORDER"
	// EnvMPSPipeDirectory is where an MPS client finds the MPS control
	// daemon's pipes. ContainerDevices does not set it: MPS limits only
	// bind when the node runs nvidia-cuda-mps-control and the container
	// gets its pipe directory (DefaultMPSPipeDirectory) mounted.
	EnvMPSPipeDirectory = "CUDA_MPS_PIPE_DIRECTORY"
)

// DefaultMPSPipeDirectory is the MPS control daemon's default pipe
// directory.
const DefaultMPSPipeDirectory = "/tmp/nvidia-mps"

// VisibleDevicesNone is the EnvVisibleDevices value that gives no GPU.
const VisibleDevicesNone = "void"

// Assigned is the part of one device assigned to a kernel: 1.0 for a whole
// device, a fraction for cuda.shares. It is the agent aggregate's
// allocation type, so Allocation.Devices can be passed as it is.
type Assigned = domain.DeviceShare

// ContainerDevices returns what a kernel's container is given for its
// device assignment: CDI device names and environment variables. The output
// is deterministic (devices and lists sorted).
//
//   - No assignment: no devices and NVIDIA_VISIBLE_DEVICES=void, so the
//     container sees no GPU even if its image asks for all of them.
//   - With an NVIDIA CDI spec (cdi.Found()): every device by its CDI name,
//     nvidia.com/gpu=<uuid> (or the spec's index name, "0" or "0:1" for a
//     MIG device, when the spec names devices by index), and
//     NVIDIA_VISIBLE_DEVICES=void so that a legacy NVIDIA hook cannot add
//     more (nvidia-ctk's own specs set the same).
//   - Without one: NVIDIA_VISIBLE_DEVICES=<uuid,uuid,...>.
//   - A fraction of a whole GPU (0 < amount < 1) adds CUDA MPS limits:
//     CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = amount × 100 rounded down, at
//     least 1 (the smallest fraction's, as it applies to every device the
//     client sees), and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT = amount × the
//     device's memory, in MiB rounded down, per device ordinal inside the
//     container; CUDA_DEVICE_ORDER=PCI_BUS_ID fixes those ordinals to the
//     GPUs' NVML index order.
//
// Every problem is reported at once (errors.Join of domain.ErrInvalid
// errors): a device not in the inventory or assigned twice, a GPU in MIG
// mode (only its MIG devices can be assigned), an amount outside (0, 1], a
// fraction of a MIG device, a fraction mixed with MIG devices, and, with a
// CDI spec, a device the spec does not name (regenerate the spec:
// nvidia-ctk cdi generate).
func ContainerDevices(assignment []Assigned, inv Inventory, cdi CDIInfo) (devices []string, env map[string]string, err error) {
	if len(assignment) == 0 {
		return nil, map[string]string{EnvVisibleDevices: VisibleDevicesNone}, nil
	}
	given, errs := resolve(assignment, inv)
	env = map[string]string{}
	if cdi.Found() {
		env[EnvVisibleDevices] = VisibleDevicesNone
		for _, g := range given {
			name, ok := cdiName(g.dev, inv, cdi)
			if !ok {
				errs = append(errs, domain.Invalid(opContainerDevices, "devices", "device %s is not in the NVIDIA CDI spec (%s); regenerate it with nvidia-ctk cdi generate", g.dev.ID, strings.Join(cdi.Specs, ", ")))
				continue
			}
			devices = append(devices, QualifiedName(name))
		}
		slices.Sort(devices)
	} else {
		ids := make([]string, 0, len(given))
		for _, g := range given {
			ids = append(ids, g.dev.ID)
		}
		slices.Sort(ids)
		env[EnvVisibleDevices] = strings.Join(ids, ",")
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	addMPSLimits(env, given)
	return devices, env, nil
}

const opContainerDevices = "accelerator.container-devices"

// assigned is one device of an assignment, found in the inventory.
type assigned struct {
	dev    Device
	amount domain.Quantity
}

func (a assigned) fraction() bool {
	return !a.dev.IsMIG() && a.amount > 0 && a.amount < domain.DeviceShareCapacity
}

// resolve finds the assigned devices in the inventory and checks the
// amounts, reporting every problem.
func resolve(assignment []Assigned, inv Inventory) ([]assigned, []error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, domain.Invalid(opContainerDevices, "devices", format, args...))
	}
	var given []assigned
	seen := make(map[string]bool, len(assignment))
	var hasMIG, hasFraction bool
	for _, a := range assignment {
		d, ok := inv.Lookup(a.DeviceID)
		switch {
		case seen[a.DeviceID]:
			bad("device %s assigned twice", a.DeviceID)
			continue
		case !ok:
			bad("no device %s on this node", a.DeviceID)
			continue
		case !d.Allocatable():
			bad("GPU %s is in MIG mode: assign its MIG devices", d.ID)
		case a.Amount <= 0 || a.Amount > domain.DeviceShareCapacity:
			bad("device %s: amount %s is not in (0, %s]", d.ID, a.Amount, domain.DeviceShareCapacity)
		case d.IsMIG() && a.Amount != domain.DeviceShareCapacity:
			bad("MIG device %s: amount %s, MIG devices are assigned whole", d.ID, a.Amount)
		}
		seen[a.DeviceID] = true
		g := assigned{dev: d, amount: a.Amount}
		hasMIG = hasMIG || d.IsMIG()
		hasFraction = hasFraction || g.fraction()
		given = append(given, g)
	}
	if hasMIG && hasFraction {
		bad("fractional GPU shares cannot be combined with MIG devices")
	}
	return given, errs
}

// addMPSLimits sets the CUDA MPS limits when a device is given in part.
// The memory limits go by device ordinal inside the container: the given
// GPUs in NVML index order (which follows the PCI bus), which
// CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA's order too.
func addMPSLimits(env map[string]string, given []assigned) {
	if !slices.ContainsFunc(given, assigned.fraction) {
		return
	}
	given = slices.Clone(given)
	slices.SortFunc(given, func(a, b assigned) int { return a.dev.Index - b.dev.Index })
	percent := int64(100)
	var limits []string
	for ordinal, g := range given {
		if !g.fraction() {
			continue
		}
		percent = min(percent, max(int64(g.amount)*100/domain.QuantityScale, 1))
		// Exact below 9 PB of device memory: the amount is in thousandths.
		mib := g.dev.MemoryBytes * int64(g.amount) / domain.QuantityScale >> 20
		limits = append(limits, fmt.Sprintf("%d=%dM", ordinal, mib))
	}
	env[EnvMPSActiveThreadPercentage] = strconv.FormatInt(percent, 10)
	env[EnvMPSPinnedDeviceMemLimit] = strings.Join(limits, ",")
	env[EnvCUDADeviceOrder] = "PCI_BUS_ID"
}

// cdiName returns the name the CDI spec gives a device: its UUID, or else
// the index name nvidia-ctk uses ("<gpu index>" for a GPU, "<gpu
// index>:<mig index>" for a MIG device).
func cdiName(d Device, inv Inventory, cdi CDIInfo) (string, bool) {
	if cdi.Has(d.ID) {
		return d.ID, true
	}
	name := strconv.Itoa(d.Index)
	if d.IsMIG() {
		parent, ok := inv.Lookup(d.ParentUUID)
		if !ok {
			return "", false
		}
		name = strconv.Itoa(parent.Index) + ":" + name
	}
	return name, cdi.Has(name)
}
