package accelerator

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

func cdiWith(names ...string) CDIInfo {
	names = slices.Clone(names)
	slices.Sort(names)
	return CDIInfo{Specs: []string{"/etc/cdi/nvidia.yaml"}, Devices: names}
}

func whole(ids ...string) []Assigned {
	var out []Assigned
	for _, id := range ids {
		out = append(out, Assigned{DeviceID: id, Amount: domain.DeviceShareCapacity})
	}
	return out
}

func TestContainerDevices(t *testing.T) {
	t.Parallel()
	// node(): GPU-b is index 0, GPU-a index 1, GPU-m (index 2) is in MIG
	// mode with MIG-3 (2:0), MIG-1 (2:1), MIG-2 (2:2); GPUs have 80 GiB.
	byUUID := cdiWith("GPU-a", "GPU-b", "GPU-m", "MIG-1", "MIG-2", "MIG-3", "all")
	byIndex := cdiWith("0", "1", "2:0", "2:1", "2:2", "all")
	const void = VisibleDevicesNone
	tests := map[string]struct {
		assign  []Assigned
		cdi     CDIInfo
		devices []string
		env     map[string]string
	}{
		"nothing assigned": {
			env: map[string]string{EnvVisibleDevices: void},
		},
		"nothing assigned, with CDI": {
			cdi: byUUID,
			env: map[string]string{EnvVisibleDevices: void},
		},
		"whole GPUs without CDI": {
			assign: whole("GPU-b", "GPU-a"),
			env:    map[string]string{EnvVisibleDevices: "GPU-a,GPU-b"},
		},
		"whole GPUs with CDI by uuid": {
			assign:  whole("GPU-b", "GPU-a"),
			cdi:     byUUID,
			devices: []string{"nvidia.com/gpu=GPU-a", "nvidia.com/gpu=GPU-b"},
			env:     map[string]string{EnvVisibleDevices: void},
		},
		"whole GPUs with CDI by index": {
			assign:  whole("GPU-a", "GPU-b"),
			cdi:     byIndex,
			devices: []string{"nvidia.com/gpu=0", "nvidia.com/gpu=1"},
			env:     map[string]string{EnvVisibleDevices: void},
		},
		"MIG devices without CDI": {
			assign: whole("MIG-2", "MIG-1"),
			env:    map[string]string{EnvVisibleDevices: "MIG-1,MIG-2"},
		},
		"MIG device with CDI by uuid": {
			assign:  whole("MIG-3"),
			cdi:     byUUID,
			devices: []string{"nvidia.com/gpu=MIG-3"},
			env:     map[string]string{EnvVisibleDevices: void},
		},
		"MIG devices with CDI by index": {
			assign:  whole("MIG-2", "MIG-3"),
			cdi:     byIndex,
			devices: []string{"nvidia.com/gpu=2:0", "nvidia.com/gpu=2:2"},
			env:     map[string]string{EnvVisibleDevices: void},
		},
		"half a GPU": {
			assign: []Assigned{{DeviceID: "GPU-a", Amount: 500}},
			env: map[string]string{
				EnvVisibleDevices:            "GPU-a",
				EnvMPSActiveThreadPercentage: "50",
				EnvMPSPinnedDeviceMemLimit:   "0=40960M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
		"half a GPU with CDI": {
			assign:  []Assigned{{DeviceID: "GPU-a", Amount: 500}},
			cdi:     byUUID,
			devices: []string{"nvidia.com/gpu=GPU-a"},
			env: map[string]string{
				EnvVisibleDevices:            void,
				EnvMPSActiveThreadPercentage: "50",
				EnvMPSPinnedDeviceMemLimit:   "0=40960M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
		"shares on two GPUs: ordinals in index order, smallest percentage": {
			assign: []Assigned{{DeviceID: "GPU-a", Amount: 750}, {DeviceID: "GPU-b", Amount: 250}},
			env: map[string]string{
				EnvVisibleDevices:            "GPU-a,GPU-b",
				EnvMPSActiveThreadPercentage: "25",
				EnvMPSPinnedDeviceMemLimit:   "0=20480M,1=61440M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
		"a whole share and a half: only the half is limited": {
			assign: []Assigned{{DeviceID: "GPU-b", Amount: 1000}, {DeviceID: "GPU-a", Amount: 500}},
			env: map[string]string{
				EnvVisibleDevices:            "GPU-a,GPU-b",
				EnvMPSActiveThreadPercentage: "50",
				EnvMPSPinnedDeviceMemLimit:   "1=40960M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
		"a tiny share: at least 1 percent, MiB rounded down": {
			assign: []Assigned{{DeviceID: "GPU-b", Amount: 1}},
			env: map[string]string{
				EnvVisibleDevices:            "GPU-b",
				EnvMPSActiveThreadPercentage: "1",
				EnvMPSPinnedDeviceMemLimit:   "0=81M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
		"a share rounded down": {
			assign: []Assigned{{DeviceID: "GPU-b", Amount: 339}},
			env: map[string]string{
				EnvVisibleDevices:            "GPU-b",
				EnvMPSActiveThreadPercentage: "33",
				EnvMPSPinnedDeviceMemLimit:   "0=27770M",
				EnvCUDADeviceOrder:           "PCI_BUS_ID",
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			devices, env, err := ContainerDevices(tt.assign, node(), tt.cdi)
			if err != nil {
				t.Fatalf("ContainerDevices: %v", err)
			}
			if !slices.Equal(devices, tt.devices) {
				t.Errorf("devices = %q, want %q", devices, tt.devices)
			}
			if !maps.Equal(env, tt.env) {
				t.Errorf("env = %v, want %v", env, tt.env)
			}
			// The same assignment in another order gives the same output.
			reversed := slices.Clone(tt.assign)
			slices.Reverse(reversed)
			devices2, env2, err := ContainerDevices(reversed, node(), tt.cdi)
			if err != nil || !slices.Equal(devices, devices2) || !maps.Equal(env, env2) {
				t.Errorf("order changed the output: %q %v %v", devices2, env2, err)
			}
		})
	}
}

func TestContainerDevicesRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		assign []Assigned
		cdi    CDIInfo
	}{
		"unknown device":            {assign: whole("GPU-zz")},
		"device twice":              {assign: whole("GPU-a", "GPU-a")},
		"GPU in MIG mode":           {assign: whole("GPU-m")},
		"zero amount":               {assign: []Assigned{{DeviceID: "GPU-a", Amount: 0}}},
		"more than a device":        {assign: []Assigned{{DeviceID: "GPU-a", Amount: 1500}}},
		"fraction of a MIG device":  {assign: []Assigned{{DeviceID: "MIG-1", Amount: 500}}},
		"fraction mixed with MIG":   {assign: []Assigned{{DeviceID: "MIG-1", Amount: 1000}, {DeviceID: "GPU-a", Amount: 500}}},
		"device not in CDI spec":    {assign: whole("GPU-a"), cdi: cdiWith("GPU-b", "all")},
		"MIG device not in CDI":     {assign: whole("MIG-1"), cdi: cdiWith("0", "1", "all")},
		"one bad among good ones":   {assign: append(whole("GPU-a", "GPU-b"), Assigned{DeviceID: "GPU-x", Amount: 1000})},
		"unknown device, with CDI":  {assign: whole("GPU-zz"), cdi: cdiWith("GPU-zz")},
		"negative amount on shares": {assign: []Assigned{{DeviceID: "GPU-b", Amount: -250}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			devices, env, err := ContainerDevices(tt.assign, node(), tt.cdi)
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("err = %v, want an invalid error", err)
			}
			if devices != nil || env != nil {
				t.Fatalf("output with an error: %q %v", devices, env)
			}
		})
	}
}

func TestContainerDevicesReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, _, err := ContainerDevices([]Assigned{{DeviceID: "GPU-zz", Amount: 1000}, {DeviceID: "GPU-m", Amount: 1000}}, node(), CDIInfo{})
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("want both problems reported, got %v", err)
	}
}
