package protocol_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
)

// Validate reports every problem of a message at once, each matching
// domain.ErrInvalid and naming its field.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    protocol.Message
		want []string
	}{
		{protocol.AgentRegister{AgentID: "a.b", Capacity: domain.Slots{domain.SlotCPU: -1}, Devices: []domain.Device{{ID: "GPU-1"}, {ID: "GPU-1", Kind: domain.SlotCUDADevice}}, Kernels: []uuid.UUID{uuid.Nil}, Address: "node:6001"},
			[]string{"agent_id", "architecture", "capacity.cpu", "capacity.mem", "devices[0]: kind required", "devices[1]: device GPU-1 listed twice", "kernels[0]", "seal_key", "address", "started_at", "at"}},
		{protocol.AgentHeartbeat{Running: []uuid.UUID{uuid.Nil}},
			[]string{"agent_id", "running[0]", "interval_ms", "started_at", "at"}},
		{protocol.KernelStatus{Phase: "exploded"},
			[]string{"session_id", "kernel_id", "agent_id", "phase", "observed_at"}},
		{protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "a", Phase: domain.PhaseRunning, ObservedAt: at},
			[]string{"container_id: required when running"}},
		{protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "a", Phase: domain.PhaseFailed, ObservedAt: at},
			[]string{"reason: required when failed"}},
		{protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "a", Phase: domain.PhaseCreating, ObservedAt: at,
			Pull: &domain.PullProgress{LayersDone: 2, LayersTotal: 1}, ReadyApps: []string{"web"}},
			[]string{"pull.layers_done", "pull: only in a pulling report", "ready_apps: only in a running report", `ready_apps[0]: "web" is not one of service_ports`}},
		{protocol.KernelCreate{Env: map[string]string{"A=B": ""}, Slots: domain.Slots{domain.SlotMem: 1}, Devices: []domain.DeviceShare{{DeviceID: "G", Amount: 2000}, {DeviceID: "G", Amount: 1}},
			Mounts: []protocol.Mount{{Source: "rel", Target: "/"}, {Source: "/a", Target: "x"}}, AllocationRevision: -1},
			[]string{"kernel_id", "session_id", "agent_id", "image", "env", "slots.mem", "devices[0]: amount 2 is not in (0, 1]", "devices[1]: device G assigned twice",
				"mounts[0]: source", "mounts[0]: target may not be /", "mounts[1]: target", "allocation_revision", "at"}},
		{protocol.KernelActivity{},
			[]string{"session_id", "kernel_id", "agent_id", "signals: at least one", "observed_at"}},
		{protocol.KernelActivity{SessionID: session, KernelID: kernel, AgentID: "a", Signals: []string{"terminal", "gpu", "gpu", "typing"}, ObservedAt: at},
			[]string{"signals: at most 3", "signals[3]: unknown signal"}},
		{protocol.KernelActivity{SessionID: session, KernelID: kernel, AgentID: "a", Signals: []string{"terminal", "gpu"}, ObservedAt: at},
			[]string{"signals: must be sorted"}},
		{protocol.KernelDestroy{},
			[]string{"kernel_id", "session_id", "agent_id", "at"}},
		{protocol.KernelSync{Kernels: []uuid.UUID{uuid.Nil}, AsOfRevision: -1},
			[]string{"agent_id", "kernels[0]", "as_of_revision", "at"}},
	} {
		err := tc.m.Validate()
		if !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s %+v: %v, want domain.ErrInvalid", tc.m.MessageType(), tc.m, err)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nwant it to mention %q", tc.m.MessageType(), err, want)
			}
		}
	}
	for _, m := range samples() {
		if err := m.Validate(); err != nil {
			t.Errorf("valid %s: %v", m.MessageType(), err)
		}
	}
}

// NewKernelCreate builds a self-contained command from the allocation and
// the session request.
func TestNewKernelCreate(t *testing.T) {
	t.Parallel()
	req := domain.SessionRequested{
		SessionID: session, Image: "localhost/cairn/base:latest", Command: "echo hello; sleep 30",
		Env: map[string]string{"A": "1"},
		Kernels: []domain.KernelSpec{
			{KernelID: kernel, Role: domain.KernelMain, Slots: domain.Slots{domain.SlotCPU: 1000}},
			{KernelID: kernel2, Role: domain.KernelSub, Slots: domain.Slots{domain.SlotCPU: 1000}},
		},
		At: at.Add(-time.Minute),
	}
	alloc := domain.AgentAllocated{
		KernelID: kernel2, SessionID: session,
		Slots:   domain.Slots{domain.SlotCPU: 1000, domain.SlotMem: domain.Units(64 << 20), domain.SlotCUDADevice: domain.Units(1)},
		Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: domain.DeviceShareCapacity}},
		At:      at,
	}
	got, err := protocol.NewKernelCreate("node-1", alloc, 4, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.KernelID != kernel2 || got.SessionID != session || got.AgentID != "node-1" || got.Role != domain.KernelSub ||
		got.Image != req.Image || strings.Join(got.Command, "|") != "/bin/sh|-c|echo hello; sleep 30" ||
		got.Env["A"] != "1" || got.Slots[domain.SlotMem] != domain.Units(64<<20) || len(got.Devices) != 1 ||
		got.AllocationRevision != 4 || !got.At.Equal(at) {
		t.Errorf("kernel.create = %+v", got)
	}
	// It owns its maps.
	got.Env["A"] = "2"
	got.Slots[domain.SlotCPU] = 1
	if req.Env["A"] != "1" || alloc.Slots[domain.SlotCPU] != 1000 {
		t.Error("NewKernelCreate shares maps with the events")
	}

	other := alloc
	other.KernelID = uuid.New()
	if _, err := protocol.NewKernelCreate("node-1", other, 4, req); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("unknown kernel: %v", err)
	}
	other = alloc
	other.SessionID = uuid.New()
	if _, err := protocol.NewKernelCreate("node-1", other, 4, req); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("other session: %v", err)
	}
	if _, err := protocol.NewKernelCreate("bad id", alloc, 4, req); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("bad agent id: %v", err)
	}
	if c := protocol.ShellCommand("  "); c != nil {
		t.Errorf("empty command: %q", c)
	}
	if _, err := protocol.NewKernelDestroy("node-1", kernel, uuid.Nil, "", at); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("destroy without a session: %v", err)
	}
}

func TestSyncAllocated(t *testing.T) {
	t.Parallel()
	s := protocol.KernelSync{AgentID: "a", Kernels: []uuid.UUID{kernel}, At: at}
	if !s.Allocated(kernel) || s.Allocated(kernel2) {
		t.Errorf("Allocated wrong for %v", s.Kernels)
	}
}
