//go:build cgo

package nvml

import (
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

var mockConstructors = map[string]func() *server.Server{
	"dgxa100": dgxa100.New,
	"dgxb200": dgxb200.New,
	"dgxh100": dgxh100.New,
	"dgxh200": dgxh200.New,
}

// mockNamespace roots the mock devices' name-based UUIDs.
var mockNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://cairn.dev/nvml-mock"))

// newMock builds the go-nvml mock server a mock spec names: stable UUIDs,
// the GPUs the spec puts in MIG mode cut into its profiles, and the device
// methods go-nvml's mock leaves out (they panic when called) filled in.
func newMock(s Spec) (*server.Server, error) {
	const op = "nvml.mock"
	srv := mockConstructors[s.Mock]()
	for _, i := range s.MIG {
		if i >= len(srv.Devices) {
			return nil, domain.Invalid(op, "gpus", "%s: mig=%d but the mock has GPUs 0-%d", s, i, len(srv.Devices)-1)
		}
	}
	for i, h := range srv.Devices {
		d := h.(*server.Device)
		d.UUID = "GPU-" + uuid.NewSHA1(mockNamespace, fmt.Appendf(nil, "%s/%s/gpu/%d", s.Mock, s.Seed, i)).String()
		var migs []nvml.Device
		if s.migMode(i) {
			var err error
			if migs, err = cutMIG(d, s.Profiles); err != nil {
				return nil, domain.Invalid(op, "gpus", "%s: GPU %d: %v", s, i, err)
			}
		}
		fillMockGPU(d, migs)
	}
	return srv, nil
}

// fillMockGPU gives a mock GPU the methods discovery needs that go-nvml's
// mock lacks: its MIG device slots, GPU instance lookup, utilization.
func fillMockGPU(d *server.Device, migs []nvml.Device) {
	slots := 0
	if len(migs) > 0 {
		for _, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
			slots = max(slots, int(p.SliceCount))
		}
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return slots, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		switch {
		case i < 0 || i >= slots:
			return nil, nvml.ERROR_INVALID_ARGUMENT
		case i >= len(migs):
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[i], nvml.SUCCESS
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		for gi := range d.GpuInstances {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		if len(migs) > 0 {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.Utilization{}, nvml.SUCCESS
	}
}

// cutMIG puts a mock GPU in MIG mode and creates one GPU instance per
// profile, each with one compute instance spanning it, through the mock's
// own API; it returns the MIG device handles, in creation order. Without
// profiles, the GPU is filled with its 1-slice profile.
func cutMIG(d *server.Device, profiles []string) ([]nvml.Device, error) {
	type profile struct {
		index int
		info  nvml.GpuInstanceProfileInfo
	}
	catalog := map[string]profile{}
	var names []string
	var total uint32
	for i := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := d.GetGpuInstanceProfileInfo(i)
		if ret != nvml.SUCCESS {
			continue
		}
		name := migProfileName(info.SliceCount, info.SliceCount, info.MemorySizeMB, d.MemoryInfo.Total, profileSuffix(i))
		catalog[name] = profile{index: i, info: info}
		names = append(names, name)
		total = max(total, info.SliceCount)
	}
	if len(profiles) == 0 {
		base, ret := d.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("no 1-slice MIG profile: %w", ret)
		}
		name := migProfileName(base.SliceCount, base.SliceCount, base.MemorySizeMB, d.MemoryInfo.Total, "")
		for range min(base.InstanceCount, total/max(base.SliceCount, 1)) {
			profiles = append(profiles, name)
		}
	}
	if ret, _ := d.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("enabling MIG: %w", ret)
	}
	var used uint32
	count := map[string]uint32{}
	var migs []nvml.Device
	for _, name := range profiles {
		p, ok := catalog[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("no MIG profile %q (known: %s)", name, strings.Join(names, ", "))
		case used+p.info.SliceCount > total:
			return nil, fmt.Errorf("profiles %s take more than the GPU's %d slices", strings.Join(profiles, ","), total)
		case count[name] >= p.info.InstanceCount:
			return nil, fmt.Errorf("at most %d instances of %s fit on a GPU", p.info.InstanceCount, name)
		}
		used += p.info.SliceCount
		count[name]++
		mig, err := createMockMIG(d, p.info, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		migs = append(migs, mig)
	}
	return migs, nil
}

// createMockMIG creates a GPU instance of profile info on d and a compute
// instance spanning it, and returns the MIG device handle NVML would give
// for the pair.
func createMockMIG(d *server.Device, info nvml.GpuInstanceProfileInfo, name string) (nvml.Device, error) {
	h, ret := d.CreateGpuInstance(&info)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("creating a GPU instance: %w", ret)
	}
	gi := h.(*server.GpuInstance)
	var ciInfo nvml.ComputeInstanceProfileInfo
	found := false
	for i := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		p, ret := gi.GetComputeInstanceProfileInfo(i, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret == nvml.SUCCESS && p.SliceCount == info.SliceCount {
			ciInfo, found = p, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("no compute instance profile spans %d slices", info.SliceCount)
	}
	c, ret := gi.CreateComputeInstance(&ciInfo)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("creating a compute instance: %w", ret)
	}
	ci := c.(*server.ComputeInstance)
	id := "MIG-" + uuid.NewSHA1(mockNamespace, fmt.Appendf(nil, "%s/gi/%d/ci/%d", d.UUID, gi.Info.Id, ci.Info.Id)).String()
	model := d.Config.Name + " MIG " + name
	mig := &mock.Device{
		GetUUIDFunc: func() (string, nvml.Return) { return id, nvml.SUCCESS },
		GetNameFunc: func() (string, nvml.Return) { return model, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: info.MemorySizeMB << 20, Free: info.MemorySizeMB << 20}, nvml.SUCCESS
		},
		GetAttributesFunc: func() (nvml.DeviceAttributes, nvml.Return) {
			return nvml.DeviceAttributes{
				MultiprocessorCount:       ciInfo.MultiprocessorCount,
				GpuInstanceSliceCount:     info.SliceCount,
				ComputeInstanceSliceCount: ciInfo.SliceCount,
				MemorySizeMB:              info.MemorySizeMB,
			}, nvml.SUCCESS
		},
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return int(gi.Info.Id), nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return int(ci.Info.Id), nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) {
			return d.Config.CudaMajor, d.Config.CudaMinor, nvml.SUCCESS
		},
		IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return d, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		},
	}
	return mig, nil
}
