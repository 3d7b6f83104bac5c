//go:build cgo

package nvml

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/domain"
)

const opInventory = "nvml.inventory"

// enumerate lists every GPU of an initialised NVML, each followed by its
// MIG devices when it is in MIG mode.
func enumerate(lib nvml.Interface) (accelerator.Inventory, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return accelerator.Inventory{}, nvmlError(opInventory, ret, "counting GPUs")
	}
	var inv accelerator.Inventory
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return accelerator.Inventory{}, nvmlError(opInventory, ret, "GPU %d", i)
		}
		gpu, err := describeGPU(dev, i)
		if err != nil {
			return accelerator.Inventory{}, err
		}
		inv.Devices = append(inv.Devices, gpu)
		if !gpu.MIGEnabled {
			continue
		}
		migs, err := describeMIGDevices(dev, gpu)
		if err != nil {
			return accelerator.Inventory{}, err
		}
		inv.Devices = append(inv.Devices, migs...)
	}
	if err := inv.Validate(); err != nil {
		return accelerator.Inventory{}, &domain.Error{Op: opInventory, Kind: domain.KindInternal, Message: "NVML reported an inconsistent inventory", Err: err}
	}
	return inv, nil
}

func describeGPU(dev nvml.Device, index int) (accelerator.Device, error) {
	uuid, ret := dev.GetUUID()
	if ret != nvml.SUCCESS {
		return accelerator.Device{}, nvmlError(opInventory, ret, "GPU %d: uuid", index)
	}
	fail := func(ret nvml.Return, what string) (accelerator.Device, error) {
		return accelerator.Device{}, nvmlError(opInventory, ret, "GPU %d (%s): %s", index, uuid, what)
	}
	name, ret := dev.GetName()
	if ret != nvml.SUCCESS {
		return fail(ret, "name")
	}
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return fail(ret, "memory")
	}
	major, minor, ret := dev.GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return fail(ret, "compute capability")
	}
	current, _, ret := dev.GetMigMode()
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_SUPPORTED: // a GPU without MIG
		current = nvml.DEVICE_MIG_DISABLE
	default:
		return fail(ret, "MIG mode")
	}
	return accelerator.Device{
		ID:                uuid,
		Index:             index,
		Kind:              domain.SlotCUDADevice,
		Model:             name,
		MemoryBytes:       int64(mem.Total),
		ComputeCapability: fmt.Sprintf("%d.%d", major, minor),
		MIGEnabled:        current == nvml.DEVICE_MIG_ENABLE,
	}, nil
}

// giProfile is one GPU instance profile of a GPU: its index (one of
// nvml.GPU_INSTANCE_PROFILE_*) and what the GPU says about it.
type giProfile struct {
	index int
	info  nvml.GpuInstanceProfileInfo
}

// gpuInstanceProfiles returns the GPU's GPU instance profiles by profile
// id, the number a GPU instance's info carries (on real GPUs it differs
// from the profile index).
func gpuInstanceProfiles(dev nvml.Device) map[uint32]giProfile {
	out := map[uint32]giProfile{}
	for i := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := dev.GetGpuInstanceProfileInfo(i)
		if ret == nvml.SUCCESS {
			out[info.Id] = giProfile{index: i, info: info}
		}
	}
	return out
}

// profileSuffix is what nvidia-smi appends to a profile's name for the
// GPU instance profile index.
func profileSuffix(index int) string {
	switch index {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		return "+gfx"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return "-me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return "+me.all"
	}
	return ""
}

// describeMIGDevices lists the MIG devices of a GPU in MIG mode. NVML
// numbers the slots 0..GetMaxMigDeviceCount-1; an empty slot answers
// ERROR_NOT_FOUND. A device's profile comes from its GPU instance (whose
// profile gives the slices, the memory and the suffix) and its attributes
// (the compute instance's slices). Looking GPU instances up needs a
// privileged process (ERROR_NO_PERMISSION otherwise).
func describeMIGDevices(dev nvml.Device, gpu accelerator.Device) ([]accelerator.Device, error) {
	fail := func(ret nvml.Return, format string, args ...any) ([]accelerator.Device, error) {
		return nil, nvmlError(opInventory, ret, "GPU %d (%s): "+format, append([]any{gpu.Index, gpu.ID}, args...)...)
	}
	slots, ret := dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return fail(ret, "MIG device count")
	}
	profiles := gpuInstanceProfiles(dev)
	var out []accelerator.Device
	for j := range slots {
		mig, ret := dev.GetMigDeviceHandleByIndex(j)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_FOUND:
			continue
		default:
			return fail(ret, "MIG device %d", j)
		}
		uuid, ret := mig.GetUUID()
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %d: uuid", j)
		}
		mem, ret := mig.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %s: memory", uuid)
		}
		attrs, ret := mig.GetAttributes()
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %s: attributes", uuid)
		}
		giID, ret := mig.GetGpuInstanceId()
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %s: GPU instance id", uuid)
		}
		gi, ret := dev.GetGpuInstanceById(giID)
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %s: GPU instance %d", uuid, giID)
		}
		giInfo, ret := gi.GetInfo()
		if ret != nvml.SUCCESS {
			return fail(ret, "MIG device %s: GPU instance %d info", uuid, giID)
		}
		p, ok := profiles[giInfo.ProfileId]
		if !ok {
			return fail(nvml.ERROR_NOT_FOUND, "MIG device %s: GPU instance profile %d", uuid, giInfo.ProfileId)
		}
		profile := migProfileName(p.info.SliceCount, attrs.ComputeInstanceSliceCount, p.info.MemorySizeMB, uint64(gpu.MemoryBytes), profileSuffix(p.index))
		out = append(out, accelerator.Device{
			ID:                uuid,
			Index:             j,
			Kind:              accelerator.MIGSlot(profile),
			Model:             gpu.Model + " MIG " + profile,
			MemoryBytes:       int64(mem.Total),
			ComputeCapability: gpu.ComputeCapability,
			ParentUUID:        gpu.ID,
		})
	}
	return out, nil
}
