//go:build cgo

package nvml

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/domain"
)

func discoverOK(t *testing.T, spec string) accelerator.Inventory {
	t.Helper()
	inv, err := Discover(spec)
	if err != nil {
		t.Fatalf("Discover(%q): %v", spec, err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatalf("Discover(%q): invalid inventory: %v", spec, err)
	}
	return inv
}

func TestDiscoverDGXH100(t *testing.T) {
	t.Parallel()
	inv := discoverOK(t, "mock:dgxh100")
	if len(inv.Devices) != 8 {
		t.Fatalf("%d devices, want 8", len(inv.Devices))
	}
	seen := map[string]bool{}
	for i, d := range inv.Devices {
		switch {
		case !strings.HasPrefix(d.ID, "GPU-") || seen[d.ID]:
			t.Errorf("GPU %d: id %q not a distinct GPU uuid", i, d.ID)
		case d.Index != i || d.Kind != domain.SlotCUDADevice || d.IsMIG() || d.MIGEnabled:
			t.Errorf("GPU %d: %+v, want a whole GPU at index %d", i, d, i)
		case !strings.Contains(d.Model, "H100"):
			t.Errorf("GPU %d: model %q", i, d.Model)
		case d.MemoryBytes < 79<<30 || d.MemoryBytes > 81<<30:
			t.Errorf("GPU %d: memory %d, want about 80 GiB", i, d.MemoryBytes)
		case d.ComputeCapability != "9.0":
			t.Errorf("GPU %d: compute capability %q", i, d.ComputeCapability)
		}
		seen[d.ID] = true
	}
	c := inv.Capacity()
	if c[domain.SlotCUDADevice] != domain.Units(8) || c[domain.SlotCUDAShares] != domain.Units(8) ||
		c[domain.SlotCUDAMem] != domain.Quantity(8*inv.Devices[0].MemoryBytes*domain.QuantityScale) || len(c) != 3 {
		t.Fatalf("capacity %v", c)
	}
}

func TestDiscoverEveryMock(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		model, capability, base string
	}{
		"dgxa100": {"A100", "8.0", "1g.5gb"},
		"dgxh100": {"H100", "9.0", "1g.10gb"},
		"dgxh200": {"H200", "9.0", "1g.18gb"},
		"dgxb200": {"B200", "10.0", "1g.23gb"},
	}
	for server, want := range tests {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			whole := discoverOK(t, "mock:"+server)
			if len(whole.Devices) != 8 || !strings.Contains(whole.Devices[7].Model, want.model) || whole.Devices[7].ComputeCapability != want.capability {
				t.Fatalf("%d devices, last %+v", len(whole.Devices), whole.Devices[len(whole.Devices)-1])
			}
			// mig=all with no profiles: every GPU cut into 7 1-slice instances.
			cut := discoverOK(t, "mock:"+server+"?mig=all")
			c := cut.Capacity()
			if len(c) != 1 || c[accelerator.MIGSlot(want.base)] != domain.Units(56) {
				t.Fatalf("mig=all capacity %v, want 56 × %s", c, want.base)
			}
		})
	}
}

func TestDiscoverIsStable(t *testing.T) {
	t.Parallel()
	a := discoverOK(t, "mock:dgxa100?mig=1")
	b := discoverOK(t, "mock:dgxa100?mig=1")
	other := discoverOK(t, "mock:dgxa100?mig=1&seed=node-2")
	if len(a.Devices) != len(b.Devices) || len(a.Devices) != len(other.Devices) {
		t.Fatalf("inventories differ in size: %d %d %d", len(a.Devices), len(b.Devices), len(other.Devices))
	}
	for i := range a.Devices {
		if a.Devices[i] != b.Devices[i] {
			t.Errorf("device %d changed between discoveries: %+v vs %+v", i, a.Devices[i], b.Devices[i])
		}
		if a.Devices[i].ID == other.Devices[i].ID {
			t.Errorf("device %d: another seed kept id %s", i, a.Devices[i].ID)
		}
	}
}

func TestDiscoverMIG(t *testing.T) {
	t.Parallel()
	inv := discoverOK(t, "mock:dgxh100?mig=0,3&profiles=3g.40gb,2g.20gb,1g.10gb+me,1g.10gb")
	byParent := map[string][]accelerator.Device{}
	var parents []accelerator.Device
	for _, d := range inv.Devices {
		switch {
		case d.IsMIG():
			byParent[d.ParentUUID] = append(byParent[d.ParentUUID], d)
		case d.MIGEnabled:
			parents = append(parents, d)
		}
	}
	if len(parents) != 2 || parents[0].Index != 0 || parents[1].Index != 3 {
		t.Fatalf("GPUs in MIG mode: %+v, want indexes 0 and 3", parents)
	}
	wantKinds := []domain.SlotName{"cuda.device:3g.40gb-mig", "cuda.device:2g.20gb-mig", "cuda.device:1g.10gb+me-mig", "cuda.device:1g.10gb-mig"}
	wantMemGiB := []int64{40, 20, 10, 10}
	seen := map[string]bool{}
	for _, p := range parents {
		migs := byParent[p.ID]
		if len(migs) != len(wantKinds) {
			t.Fatalf("GPU %d: %d MIG devices, want %d", p.Index, len(migs), len(wantKinds))
		}
		for j, m := range migs {
			switch {
			case !strings.HasPrefix(m.ID, "MIG-") || seen[m.ID]:
				t.Errorf("MIG id %q not a distinct MIG uuid", m.ID)
			case m.Kind != wantKinds[j] || m.Index != j:
				t.Errorf("GPU %d MIG %d: kind %s index %d, want %s %d", p.Index, j, m.Kind, m.Index, wantKinds[j], j)
			case m.MemoryBytes != wantMemGiB[j]<<30:
				t.Errorf("%s: memory %d", m.ID, m.MemoryBytes)
			case m.ComputeCapability != "9.0" || !strings.HasSuffix(m.Model, " MIG "+m.MIGProfile()):
				t.Errorf("%s: %+v", m.ID, m)
			}
			seen[m.ID] = true
		}
	}
	c := inv.Capacity()
	want := domain.Slots{
		domain.SlotCUDADevice:        domain.Units(6),
		domain.SlotCUDAShares:        domain.Units(6),
		domain.SlotCUDAMem:           domain.Quantity(6 * (80 << 30) * domain.QuantityScale),
		"cuda.device:3g.40gb-mig":    domain.Units(2),
		"cuda.device:2g.20gb-mig":    domain.Units(2),
		"cuda.device:1g.10gb+me-mig": domain.Units(2),
		"cuda.device:1g.10gb-mig":    domain.Units(2),
	}
	if len(c) != len(want) {
		t.Fatalf("capacity %v, want %v", c, want)
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("capacity %s = %s, want %s", k, c[k], v)
		}
	}
	// The agent aggregate takes what discovery reports.
	spec := inv.AgentSpec("node-1", "x86_64", domain.Slots{domain.SlotCPU: domain.Units(64), domain.SlotMem: domain.Units(1 << 40)})
	agent, err := domain.RehydrateAgent(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Register(spec, time.Unix(1, 0)); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if len(spec.Devices) != 6+8 {
		t.Fatalf("%d devices registered, want 14 (6 GPUs, 8 MIG devices)", len(spec.Devices))
	}
}

func TestDiscoverRefusesBadMIGLayouts(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{
		"mock:dgxh100?mig=8",
		"mock:dgxh100?mig=0&profiles=5g.50gb",
		"mock:dgxh100?mig=0&profiles=7g.80gb,1g.10gb",
		"mock:dgxh100?mig=0&profiles=1g.10gb+me,1g.10gb+me",
		"mock:dgxa100?mig=0&profiles=1g.20gb",
	} {
		if _, err := Discover(spec); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: err = %v, want an invalid error", spec, err)
		}
	}
}

func TestDiscoverNone(t *testing.T) {
	t.Parallel()
	inv, err := Discover("none")
	if err != nil || len(inv.Devices) != 0 || len(inv.Capacity()) != 0 {
		t.Fatalf("none: %+v %v", inv, err)
	}
}

// TestDiscoverRealNVMLWithoutDriver runs on machines without an NVIDIA
// driver (this project's): the error must say so and name the library.
func TestDiscoverRealNVMLWithoutDriver(t *testing.T) {
	t.Parallel()
	for spec, library := range map[string]string{
		"nvml":                         "libnvidia-ml.so.1",
		"nvml:/nonexistent/libnvml.so": "/nonexistent/libnvml.so",
	} {
		_, err := Discover(spec)
		switch {
		case !errors.Is(err, ErrLibraryNotFound):
			t.Fatalf("%s: err = %v, want ErrLibraryNotFound (is a driver installed here?)", spec, err)
		case !errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND) || !errors.Is(err, domain.ErrUnavailable):
			t.Errorf("%s: err = %v, want nvml.ERROR_LIBRARY_NOT_FOUND and unavailable", spec, err)
		case !strings.Contains(err.Error(), library) || !strings.Contains(err.Error(), "libnvidia-ml.so"):
			t.Errorf("%s: %q does not name %s", spec, err, library)
		}
		if _, err := Open(spec); !errors.Is(err, ErrLibraryNotFound) {
			t.Errorf("Open(%s): err = %v", spec, err)
		}
	}
}

func TestLibrary(t *testing.T) {
	t.Parallel()
	l, err := Open("mock:dgxh200?mig=1")
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec().Mock != "dgxh200" {
		t.Errorf("spec %+v", l.Spec())
	}
	first, err := l.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Inventory()
	if err != nil || len(again.Devices) != len(first.Devices) || len(first.Devices) != 8+7 {
		t.Fatalf("inventories: %d then %d devices, %v", len(first.Devices), len(again.Devices), err)
	}
	// Concurrent use is safe (go test -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := l.Inventory(); err != nil {
				t.Error(err)
			}
			if _, err := l.Utilization(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	use, err := l.Utilization()
	if err != nil {
		t.Fatal(err)
	}
	if len(use) != 7 { // GPU 1 is in MIG mode: NVML does not sample it
		t.Fatalf("%d utilization samples, want 7", len(use))
	}
	for _, u := range use {
		if d, ok := first.Lookup(u.DeviceID); !ok || d.MIGEnabled || u.GPUPercent > 100 {
			t.Errorf("sample %+v", u)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Inventory(); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("Inventory after Close: %v", err)
	}
	if _, err := l.Utilization(); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("Utilization after Close: %v", err)
	}
	none, err := Open("none")
	if err != nil {
		t.Fatal(err)
	}
	if use, err := none.Utilization(); err != nil || len(use) != 0 {
		t.Fatalf("none: %v %v", use, err)
	}
	if err := none.Close(); err != nil {
		t.Fatal(err)
	}
}

// counting wraps a mock server and counts Init and Shutdown.
type counting struct {
	*server.Server
	inits, shutdowns atomic.Int32
}

func (c *counting) Init() nvml.Return     { c.inits.Add(1); return c.Server.Init() }
func (c *counting) Shutdown() nvml.Return { c.shutdowns.Add(1); return c.Server.Shutdown() }

func mockServer(t *testing.T, spec string) (Spec, *server.Server) {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newMock(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

func TestDiscoverAlwaysShutsDown(t *testing.T) {
	t.Parallel()
	s, srv := mockServer(t, "mock:dgxa100?mig=2")
	ok := &counting{Server: srv}
	if _, err := discover(s, ok); err != nil {
		t.Fatal(err)
	}
	// A driver that refuses GPU instance lookups (an unprivileged agent).
	s, srv = mockServer(t, "mock:dgxa100?mig=2")
	srv.Devices[2].(*server.Device).GetGpuInstanceByIdFunc = func(int) (nvml.GpuInstance, nvml.Return) {
		return nil, nvml.ERROR_NO_PERMISSION
	}
	failing := &counting{Server: srv}
	_, err := discover(s, failing)
	if !errors.Is(err, nvml.ERROR_NO_PERMISSION) || !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("err = %v, want ERROR_NO_PERMISSION, unavailable", err)
	}
	for name, c := range map[string]*counting{"success": ok, "failure": failing} {
		if c.inits.Load() != 1 || c.shutdowns.Load() != 1 {
			t.Errorf("%s: %d Init, %d Shutdown, want 1 each", name, c.inits.Load(), c.shutdowns.Load())
		}
	}
}

func TestDiscoverSkipsEmptyMIGSlots(t *testing.T) {
	t.Parallel()
	s, srv := mockServer(t, "mock:dgxa100?mig=0&profiles=1g.5gb,1g.5gb,1g.5gb")
	d := srv.Devices[0].(*server.Device)
	full := d.GetMigDeviceHandleByIndexFunc
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 { // an instance destroyed after the others were made
			return nil, nvml.ERROR_NOT_FOUND
		}
		return full(i)
	}
	inv, err := discover(s, srv)
	if err != nil {
		t.Fatal(err)
	}
	var indexes []int
	for _, dev := range inv.Devices {
		if dev.IsMIG() {
			indexes = append(indexes, dev.Index)
		}
	}
	if len(indexes) != 2 || indexes[0] != 0 || indexes[1] != 2 {
		t.Fatalf("MIG indexes %v, want [0 2]", indexes)
	}
}

func TestDiscoverGPUWithoutMIGSupport(t *testing.T) {
	t.Parallel()
	s, srv := mockServer(t, "mock:dgxh100")
	for _, h := range srv.Devices {
		h.(*server.Device).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	}
	inv, err := discover(s, srv)
	if err != nil || len(inv.Devices) != 8 || inv.Devices[0].MIGEnabled {
		t.Fatalf("%+v %v", inv, err)
	}
	srv.Devices[3].(*server.Device).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_UNKNOWN }
	if _, err := discover(s, srv); !errors.Is(err, nvml.ERROR_UNKNOWN) {
		t.Fatalf("err = %v, want ERROR_UNKNOWN", err)
	}
}
