package node

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

func testInventory() accelerator.Inventory {
	return accelerator.Inventory{Devices: []accelerator.Device{
		{ID: "GPU-a", Index: 0, Kind: domain.SlotCUDADevice, MemoryBytes: 80 << 30},
		{ID: "GPU-b", Index: 1, Kind: domain.SlotCUDADevice, MemoryBytes: 80 << 30},
	}}
}

func testCreate() protocol.KernelCreate {
	return protocol.KernelCreate{
		KernelID: uuid.MustParse("0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b70"), SessionID: uuid.MustParse("0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b00"),
		AgentID: "node-1", Role: domain.KernelMain, Image: "localhost/cairn/base:latest", Command: []string{"sleep", "1"},
		Env:                map[string]string{"A": "1", EnvKernelID: "forged", accelerator.EnvVisibleDevices: "all"},
		Slots:              domain.Slots{domain.SlotCPU: 1500, domain.SlotMem: domain.Units(64 << 20)},
		Mounts:             []protocol.Mount{{Source: "/data/a", Target: "/home/work/a", ReadOnly: true}},
		AllocationRevision: 12, At: time.Now().UTC(),
	}
}

func TestBuildSpec(t *testing.T) {
	t.Parallel()
	cfg := Config{AgentID: "node-1", StopGrace: 3 * time.Second}
	m := testCreate()
	spec, err := buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{})
	if err != nil {
		t.Fatal(err)
	}
	if spec.KernelID != m.KernelID.String() || spec.SessionID != m.SessionID.String() || spec.AgentID != "node-1" || spec.Image != m.Image ||
		!slices.Equal(spec.Command, m.Command) || spec.CPU != 1500 || spec.MemoryBytes != 64<<20 || spec.StopGrace != 3*time.Second ||
		spec.Rlimits.NoFile != runtime.DefaultRlimit || len(spec.Devices) != 0 ||
		len(spec.Mounts) != 1 || spec.Mounts[0] != (runtime.Mount{Source: "/data/a", Target: "/home/work/a", ReadOnly: true}) {
		t.Errorf("spec = %+v", spec)
	}
	for k, v := range map[string]string{
		"A": "1", EnvKernelID: m.KernelID.String(), EnvSessionID: m.SessionID.String(),
		EnvKernelRole: "main", accelerator.EnvVisibleDevices: accelerator.VisibleDevicesNone,
	} {
		if spec.Env[k] != v {
			t.Errorf("env %s = %q, want %q", k, spec.Env[k], v)
		}
	}
	if spec.Labels[LabelAllocationRevision] != "12" {
		t.Errorf("labels = %v", spec.Labels)
	}
	// Isolation: the agent's user namespace and capabilities, by default
	// a private namespace and the minimal set.
	if spec.UserNS == nil || *spec.UserNS != runtime.DefaultIDMap || !slices.Equal(spec.Capabilities, runtime.DefaultCapabilities) {
		t.Errorf("isolation: userns %+v capabilities %v", spec.UserNS, spec.Capabilities)
	}
	hostCfg := cfg
	hostCfg.UserNS, hostCfg.Capabilities = UserNSHost, []string{"CHOWN"}
	if s, err := buildSpec(hostCfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{}); err != nil || s.UserNS != nil || !slices.Equal(s.Capabilities, []string{"CHOWN"}) {
		t.Errorf("under --kernel-userns=host: userns %+v capabilities %v, %v", s.UserNS, s.Capabilities, err)
	}

	// Whole GPUs without a CDI spec: NVIDIA_VISIBLE_DEVICES; with one: CDI names.
	m.Devices = []domain.DeviceShare{{DeviceID: "GPU-b", Amount: domain.DeviceShareCapacity}, {DeviceID: "GPU-a", Amount: domain.DeviceShareCapacity}}
	spec, err = buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{})
	if err != nil || spec.Env[accelerator.EnvVisibleDevices] != "GPU-a,GPU-b" || len(spec.Devices) != 0 {
		t.Errorf("GPUs without CDI: env %v devices %v, %v", spec.Env, spec.Devices, err)
	}
	cdi := accelerator.CDIInfo{Specs: []string{"/etc/cdi/nvidia.yaml"}, Devices: []string{"GPU-a", "GPU-b"}}
	spec, err = buildSpec(cfg, testInventory(), cdi, m, kernelApps{})
	if err != nil || !slices.Equal(spec.Devices, []string{"nvidia.com/gpu=GPU-a", "nvidia.com/gpu=GPU-b"}) || spec.Env[accelerator.EnvVisibleDevices] != "void" {
		t.Errorf("GPUs with CDI: env %v devices %v, %v", spec.Env, spec.Devices, err)
	}
	// A fraction: MPS limits.
	m.Devices = []domain.DeviceShare{{DeviceID: "GPU-a", Amount: 500}}
	spec, err = buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{})
	if err != nil || spec.Env[accelerator.EnvMPSActiveThreadPercentage] != "50" {
		t.Errorf("half a GPU: env %v, %v", spec.Env, err)
	}

	// A tiny CPU share is raised to the runtime's minimum; no cpu slot is unlimited.
	m = testCreate()
	m.Slots = domain.Slots{domain.SlotCPU: 1, domain.SlotMem: domain.Units(64 << 20)}
	if spec, err := buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{}); err != nil || spec.CPU != runtime.MinCPU {
		t.Errorf("tiny cpu: %d, %v", spec.CPU, err)
	}
	m.Slots = domain.Slots{}
	if spec, err := buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{}); err != nil || spec.CPU != 0 || spec.MemoryBytes != 0 {
		t.Errorf("no slots: cpu %d mem %d, %v", spec.CPU, spec.MemoryBytes, err)
	}

	// Apps: each port on its host port on loopback, the token in the
	// environment whatever the request says.
	m = testCreate()
	m.Env[EnvAppToken] = "forged"
	apps := kernelApps{token: "tok", ports: []domain.PublishedPort{{Name: "web", Protocol: "http", ContainerPort: 8080, HostPort: 30007}}}
	spec, err = buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, apps)
	if err != nil || spec.Env[EnvAppToken] != "tok" ||
		!slices.Equal(spec.Ports, []runtime.PortMapping{{HostIP: "127.0.0.1", HostPort: 30007, ContainerPort: 8080, Protocol: "tcp"}}) {
		t.Errorf("apps: env %s=%q ports %+v, %v", EnvAppToken, spec.Env[EnvAppToken], spec.Ports, err)
	}

	// What cannot run is an error (reported failed-to-start).
	m = testCreate()
	m.Devices = []domain.DeviceShare{{DeviceID: "GPU-zzz", Amount: domain.DeviceShareCapacity}}
	if _, err := buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("unknown GPU: %v", err)
	}
	m = testCreate()
	m.Slots[domain.SlotMem] = domain.Units(1 << 20)
	if _, err := buildSpec(cfg, testInventory(), accelerator.CDIInfo{}, m, kernelApps{}); !errors.Is(err, runtime.ErrInvalid) {
		t.Errorf("1 MiB of memory: %v", err)
	}
}
