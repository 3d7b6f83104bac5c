package accelerator

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

const gib = int64(1) << 30

var (
	mig1g = MIGSlot("1g.10gb")
	mig3g = MIGSlot("3g.40gb")
)

// node is a small inventory: two whole H100s, a third in MIG mode cut into
// 3g.40gb + 2 × 1g.10gb.
func node() Inventory {
	return Inventory{Devices: []Device{
		{ID: "GPU-b", Index: 0, Kind: domain.SlotCUDADevice, Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 * gib, ComputeCapability: "9.0"},
		{ID: "GPU-a", Index: 1, Kind: domain.SlotCUDADevice, Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 * gib, ComputeCapability: "9.0"},
		{ID: "GPU-m", Index: 2, Kind: domain.SlotCUDADevice, Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 * gib, ComputeCapability: "9.0", MIGEnabled: true},
		{ID: "MIG-3", Index: 0, Kind: mig3g, Model: "NVIDIA H100 80GB HBM3 MIG 3g.40gb", MemoryBytes: 40 * gib, ComputeCapability: "9.0", ParentUUID: "GPU-m"},
		{ID: "MIG-1", Index: 1, Kind: mig1g, Model: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", MemoryBytes: 10 * gib, ComputeCapability: "9.0", ParentUUID: "GPU-m"},
		{ID: "MIG-2", Index: 2, Kind: mig1g, Model: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", MemoryBytes: 10 * gib, ComputeCapability: "9.0", ParentUUID: "GPU-m"},
	}}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		inv  Inventory
		want domain.Slots
	}{
		"no devices": {Inventory{}, domain.Slots{}},
		"whole GPUs and MIG devices": {node(), domain.Slots{
			domain.SlotCUDADevice: domain.Units(2),
			domain.SlotCUDAShares: domain.Units(2),
			domain.SlotCUDAMem:    domain.Quantity(160 * gib * domain.QuantityScale),
			mig3g:                 domain.Units(1),
			mig1g:                 domain.Units(2),
		}},
		"only a GPU in MIG mode, no MIG devices yet": {
			Inventory{Devices: []Device{{ID: "GPU-m", Kind: domain.SlotCUDADevice, MemoryBytes: 80 * gib, MIGEnabled: true}}},
			domain.Slots{},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := tt.inv.Capacity()
			if got == nil || len(got) != len(tt.want) {
				t.Fatalf("Capacity() = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

func TestDeviceHelpers(t *testing.T) {
	t.Parallel()
	inv := node()
	d, ok := inv.Lookup("MIG-3")
	if !ok || !d.IsMIG() || !d.Allocatable() || d.MIGProfile() != "3g.40gb" {
		t.Fatalf("MIG-3: %+v ok=%v profile %q", d, ok, d.MIGProfile())
	}
	if p, _ := inv.Lookup("GPU-m"); p.Allocatable() || p.MIGProfile() != "" {
		t.Fatalf("GPU in MIG mode must not be allocatable: %+v", p)
	}
	if _, ok := inv.Lookup("GPU-zz"); ok {
		t.Fatal("found a device that does not exist")
	}
	if got := len(inv.Allocatable()); got != 5 {
		t.Fatalf("%d allocatable devices, want 5", got)
	}
	if !domain.IsMIGSlot(MIGSlot("1g.10gb+me")) {
		t.Fatal("MIGSlot does not make a MIG slot")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := node().Validate(); err != nil {
		t.Fatalf("valid inventory: %v", err)
	}
	tests := map[string]func(*Inventory){
		"empty id":        func(inv *Inventory) { inv.Devices[0].ID = "" },
		"id twice":        func(inv *Inventory) { inv.Devices[1].ID = inv.Devices[0].ID },
		"negative memory": func(inv *Inventory) { inv.Devices[0].MemoryBytes = -1 },
		"GPU kind":        func(inv *Inventory) { inv.Devices[0].Kind = domain.SlotCUDAShares },
		"MIG kind":        func(inv *Inventory) { inv.Devices[3].Kind = domain.SlotCUDADevice },
		"missing parent":  func(inv *Inventory) { inv.Devices[3].ParentUUID = "GPU-nope" },
		"parent not MIG":  func(inv *Inventory) { inv.Devices[2].MIGEnabled = false },
		"MIG in MIG mode": func(inv *Inventory) { inv.Devices[4].MIGEnabled = true },
	}
	for name, breakIt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inv := node()
			breakIt(&inv)
			if err := inv.Validate(); !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("Validate() = %v, want an invalid error", err)
			}
		})
	}
}

// TestAgentSpecRegistersAndAllocates feeds the inventory to the agent
// aggregate: it registers, and shares, whole GPUs and MIG slots allocate
// on the devices it reported.
func TestAgentSpecRegistersAndAllocates(t *testing.T) {
	t.Parallel()
	inv := node()
	host := domain.Slots{domain.SlotCPU: domain.Units(32), domain.SlotMem: domain.Quantity(256 * gib * domain.QuantityScale), domain.SlotCUDADevice: domain.Units(99)}
	spec := inv.AgentSpec("node-1", "x86_64", host)
	if spec.Capacity[domain.SlotCUDADevice] != domain.Units(2) {
		t.Fatalf("cuda.device %s: the inventory's slots must replace the host's", spec.Capacity[domain.SlotCUDADevice])
	}
	if spec.Capacity[domain.SlotCPU] != domain.Units(32) || host[mig1g] != 0 {
		t.Fatalf("host slots lost, or host modified: %v / %v", spec.Capacity, host)
	}
	if got := len(spec.Devices); got != 5 {
		t.Fatalf("%d devices, want 5 (the GPU in MIG mode is left out)", got)
	}
	for i := 1; i < len(spec.Devices); i++ {
		if spec.Devices[i-1].ID >= spec.Devices[i].ID {
			t.Fatalf("devices not sorted by id: %v", spec.Devices)
		}
	}

	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	agent, err := domain.RehydrateAgent(nil)
	if err != nil {
		t.Fatal(err)
	}
	events, err := agent.Register(spec, at)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	var recorded []domain.RecordedEvent
	for i, e := range events {
		recorded = append(recorded, domain.RecordedEvent{Revision: int64(i), Event: e})
	}
	if agent, err = domain.RehydrateAgent(recorded); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Register(spec, at); err != nil {
		t.Fatalf("registering the same inventory again: %v", err)
	}
	session := uuid.New()
	cpu := domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Quantity(gib * domain.QuantityScale)}
	with := func(name domain.SlotName, q domain.Quantity) domain.Slots {
		s := cpu.Clone()
		s[name] = q
		return s
	}
	_, err = agent.AllocateKernels([]domain.AllocationRequest{
		{KernelID: uuid.New(), SessionID: session, Slots: with(domain.SlotCUDAShares, 500), Devices: []Assigned{{DeviceID: "GPU-a", Amount: 500}}},
		{KernelID: uuid.New(), SessionID: session, Slots: with(domain.SlotCUDADevice, domain.Units(1)), Devices: []Assigned{{DeviceID: "GPU-b", Amount: domain.Units(1)}}},
		{KernelID: uuid.New(), SessionID: session, Slots: with(mig1g, domain.Units(1)), Devices: []Assigned{{DeviceID: "MIG-1", Amount: domain.Units(1)}}},
		{KernelID: uuid.New(), SessionID: session, Slots: with(mig1g, domain.Units(1)), Devices: []Assigned{{DeviceID: "MIG-2", Amount: domain.Units(1)}}},
		{KernelID: uuid.New(), SessionID: session, Slots: with(mig3g, domain.Units(1)), Devices: []Assigned{{DeviceID: "MIG-3", Amount: domain.Units(1)}}},
	}, at)
	if err != nil {
		t.Fatalf("allocating on the reported devices: %v", err)
	}
}
