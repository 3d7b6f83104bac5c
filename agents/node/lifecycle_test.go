package node_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// A kernel.create runs the kernel with what it asks for, reports each step,
// is idempotent, and a kernel.destroy removes it, keeping its logs.
func TestKernelLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Listen = "127.0.0.1:0"
	a, _ := h.runAgent(cfg)
	reg := h.register(0)
	if reg.AgentID != h.agentID || reg.Architecture != node.HostArchitecture() || reg.Capacity[domain.SlotCPU] <= 0 ||
		reg.Capacity[domain.SlotMem] <= 0 || len(reg.Devices) != 0 || reg.Version != "test" || !strings.HasPrefix(reg.Address, "http://127.0.0.1:") {
		t.Errorf("agent.register = %+v", reg)
	}

	create := h.create("sh", "-c", "echo hello; echo oops >&2; sleep 30")
	msg := h.send(create)
	running := h.status(0, create.KernelID, domain.PhaseRunning)
	if running.ContainerID == "" || running.SessionID != create.SessionID || running.AgentID != h.agentID {
		t.Fatalf("running report = %+v", running)
	}
	if got := h.phases(create.KernelID); !slices.Equal(got, []domain.KernelPhase{domain.PhasePreparing, domain.PhaseCreating, domain.PhaseRunning}) {
		t.Errorf("phases = %v, want preparing, creating, running (the image is local: no pulling)", got)
	}

	// The container: limits, labels, environment.
	data := h.inspect(running.ContainerID)
	if data.HostConfig.Memory != 64<<20 {
		t.Errorf("memory limit = %d, want %d", data.HostConfig.Memory, 64<<20)
	}
	if data.HostConfig.CpuQuota != 50_000 || data.HostConfig.CpuPeriod != 100_000 {
		t.Errorf("cpu quota/period = %d/%d, want 50000/100000", data.HostConfig.CpuQuota, data.HostConfig.CpuPeriod)
	}
	for k, v := range map[string]string{
		runtime.LabelKernel: create.KernelID.String(), runtime.LabelSession: create.SessionID.String(),
		runtime.LabelAgent: h.agentID, runtime.LabelManaged: "true", node.LabelAllocationRevision: "1",
	} {
		if data.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, data.Config.Labels[k], v)
		}
	}
	env := envOf(data)
	if env[node.EnvKernelID] != create.KernelID.String() || env[node.EnvSessionID] != create.SessionID.String() || env["NVIDIA_VISIBLE_DEVICES"] != "void" {
		t.Errorf("env = %v", env)
	}

	// Logs, in process and over HTTP.
	h.eventually("hello in the logs", func() bool {
		logs, err := a.Logs(h.ctx, create.KernelID, runtime.LogOptions{})
		return err == nil && strings.Contains(string(logs), "hello\n") && strings.Contains(string(logs), "oops\n")
	})
	if body, status := get(t, reg.Address+"/kernels/"+create.KernelID.String()+"/logs?tail=1", h.signAs(h.agentID)); status != http.StatusOK || body != "oops\n" && body != "hello\n" {
		t.Errorf("GET logs?tail=1 = %d %q", status, body)
	}
	if _, status := get(t, reg.Address+"/kernels/"+uuid.NewString()+"/logs", h.signAs(h.agentID)); status != http.StatusNotFound {
		t.Errorf("logs of an unknown kernel: %d, want 404", status)
	}
	if _, status := get(t, reg.Address+"/kernels/nope/logs", h.signAs(h.agentID)); status != http.StatusBadRequest {
		t.Errorf("logs of a bad kernel id: %d, want 400", status)
	}
	// Only the manager may read logs: unsigned, for another agent, or
	// signed by another installation's key is 401.
	logsURL := reg.Address + "/kernels/" + create.KernelID.String() + "/logs"
	for what, sign := range map[string]func(*http.Request){"unsigned": nil, "for another agent": h.signAs("other"), "by a stranger": h.strangerSigns()} {
		if _, status := get(t, logsURL, sign); status != http.StatusUnauthorized {
			t.Errorf("GET logs %s: %d, want 401", what, status)
		}
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		if _, status := get(t, reg.Address+path, nil); status != http.StatusOK {
			t.Errorf("GET %s: %d", path, status)
		}
	}

	// Heartbeats list the running kernel.
	h.reports.await(t, 0, "a heartbeat with the kernel", func(m protocol.Message) bool {
		hb, ok := m.(protocol.AgentHeartbeat)
		return ok && slices.Contains(hb.Running, create.KernelID) && hb.Interval() == cfg.HeartbeatInterval
	})

	// Redelivered (same message) and republished (new message id): nothing new.
	h.publish(msg)
	mark := h.reports.mark()
	h.send(create)
	h.send(protocol.KernelSync{AgentID: h.agentID, Kernels: []uuid.UUID{create.KernelID}, AsOfRevision: 1, At: time.Now().UTC()})
	again := h.status(mark, create.KernelID, domain.PhaseRunning) // the sync's report: the creates were handled before it
	if again.ContainerID != running.ContainerID {
		t.Errorf("running again in %s, was %s", again.ContainerID, running.ContainerID)
	}
	if cs := h.containers(); len(cs) != 1 || cs[0].ID != running.ContainerID || cs[0].State != runtime.StateRunning {
		t.Errorf("containers after redelivery = %+v, want just %s running", cs, running.ContainerID)
	}
	if n := h.reports.count(mark, isPhase(create.KernelID, domain.PhasePreparing)); n != 0 {
		t.Errorf("the kernel was prepared %d more times", n)
	}

	// Destroy: removed, gone, logs kept.
	mark = h.reports.mark()
	h.send(h.destroy(create))
	h.status(mark, create.KernelID, domain.PhaseRemoved)
	if cs := h.containers(); len(cs) != 0 {
		t.Errorf("containers after destroy = %+v", cs)
	}
	if n := h.reports.count(mark, isPhase(create.KernelID, domain.PhaseExited)); n != 0 {
		t.Error("a destroyed kernel was reported exited")
	}
	logs, err := a.Logs(h.ctx, create.KernelID, runtime.LogOptions{})
	if err != nil || !strings.Contains(string(logs), "hello\n") {
		t.Errorf("logs after removal = %q, %v", logs, err)
	}
	if body, status := get(t, reg.Address+"/kernels/"+create.KernelID.String()+"/logs", h.signAs(h.agentID)); status != http.StatusOK || !strings.Contains(body, "hello\n") {
		t.Errorf("GET logs after removal = %d %q", status, body)
	}

	// A kernel.create that comes after the destroy creates nothing and is
	// answered with the final report.
	mark = h.reports.mark()
	h.send(create)
	h.status(mark, create.KernelID, domain.PhaseRemoved)
	if cs := h.containers(); len(cs) != 0 {
		t.Errorf("a create after the destroy made %+v", cs)
	}
	if n := h.reports.count(mark, isPhase(create.KernelID, domain.PhasePreparing)); n != 0 {
		t.Error("a create after the destroy prepared the kernel again")
	}
}

// An exit code is reported, and a kernel that exited never runs again.
func TestExitCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.runAgent(h.config())
	create := h.create("sh", "-c", "exit 3")
	h.send(create)
	exited := h.status(0, create.KernelID, domain.PhaseExited)
	if exited.ExitCode != 3 || exited.ContainerID == "" {
		t.Fatalf("exited report = %+v, want exit code 3", exited)
	}
	before := h.containers()
	if len(before) != 1 || before[0].State != runtime.StateExited {
		t.Fatalf("containers = %+v", before)
	}
	started := h.inspect(before[0].ID).State.StartedAt

	mark := h.reports.mark()
	h.send(create)
	h.send(protocol.KernelSync{AgentID: h.agentID, Kernels: []uuid.UUID{create.KernelID}, AsOfRevision: 1, At: time.Now().UTC()})
	if again := h.status(mark, create.KernelID, domain.PhaseExited); again.ExitCode != 3 {
		t.Errorf("repeated report = %+v", again)
	}
	after := h.containers()
	if len(after) != 1 || after[0].ID != before[0].ID || after[0].State != runtime.StateExited || !h.inspect(after[0].ID).State.StartedAt.Equal(started) {
		t.Errorf("after a second kernel.create: %+v; want %s exited, not restarted", after, before[0].ID)
	}

	mark = h.reports.mark()
	h.send(h.destroy(create))
	h.status(mark, create.KernelID, domain.PhaseRemoved)
}

// A kernel that cannot be created is reported failed-to-start with the
// cause, and is not retried.
func TestImageMissing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.runAgent(h.config())
	create := h.create("true")
	create.Image = "localhost/cairn/missing-" + randomID(t) + ":latest"
	h.send(create)
	failed := h.status(0, create.KernelID, domain.PhaseFailed)
	if failed.Reason != domain.ReasonFailedToStart || !strings.Contains(failed.Message, create.Image) {
		t.Errorf("failed report = %+v", failed)
	}
	if got := h.phases(create.KernelID); !slices.Equal(got, []domain.KernelPhase{domain.PhasePreparing, domain.PhasePulling, domain.PhaseFailed}) {
		t.Errorf("phases = %v", got)
	}

	mark := h.reports.mark()
	h.send(create)
	h.status(mark, create.KernelID, domain.PhaseFailed)
	if n := h.reports.count(mark, isPhase(create.KernelID, domain.PhasePulling)); n != 0 {
		t.Error("a failed kernel was tried again")
	}
	mark = h.reports.mark()
	h.send(h.destroy(create))
	h.status(mark, create.KernelID, domain.PhaseRemoved)
	if cs := h.containers(); len(cs) != 0 {
		t.Errorf("containers = %+v", cs)
	}
}

// The agent registers the GPUs of go-nvml's DGX H100 mock, and a kernel
// given a whole GPU sees it by NVIDIA_VISIBLE_DEVICES (no CDI spec here).
func TestMockGPUs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.GPUs = "mock:dgxh100"
	h.runAgent(cfg)
	reg := h.register(0)
	if reg.Capacity[domain.SlotCUDADevice] != domain.Units(8) || reg.Capacity[domain.SlotCUDAShares] != domain.Units(8) || len(reg.Devices) != 8 {
		t.Fatalf("agent.register capacity %v, %d devices; want 8 GPUs", reg.Capacity, len(reg.Devices))
	}
	gpu := reg.Devices[3]
	if gpu.Kind != domain.SlotCUDADevice || !strings.HasPrefix(gpu.ID, "GPU-") || !strings.Contains(gpu.Model, "H100") {
		t.Errorf("device = %+v", gpu)
	}

	create := h.create("sh", "-c", `echo "gpus=$NVIDIA_VISIBLE_DEVICES"; sleep 30`)
	create.Slots[domain.SlotCUDADevice] = domain.Units(1)
	create.Devices = []domain.DeviceShare{{DeviceID: gpu.ID, Amount: domain.DeviceShareCapacity}}
	h.send(create)
	running := h.status(0, create.KernelID, domain.PhaseRunning)
	if env := envOf(h.inspect(running.ContainerID)); env["NVIDIA_VISIBLE_DEVICES"] != gpu.ID {
		t.Errorf("NVIDIA_VISIBLE_DEVICES = %q, want %s", env["NVIDIA_VISIBLE_DEVICES"], gpu.ID)
	}
	h.eventually("the kernel printing its GPU", func() bool {
		logs, err := h.rt.Logs(h.ctx, running.ContainerID, runtime.LogOptions{})
		return err == nil && strings.Contains(string(logs), "gpus="+gpu.ID+"\n")
	})

	// A GPU this node does not have: failed, not run.
	bad := h.create("true")
	bad.Devices = []domain.DeviceShare{{DeviceID: "GPU-not-here", Amount: domain.DeviceShareCapacity}}
	h.send(bad)
	if f := h.status(0, bad.KernelID, domain.PhaseFailed); !strings.Contains(f.Message, "GPU-not-here") {
		t.Errorf("failed report = %+v", f)
	}
}

func isPhase(kernel uuid.UUID, phase domain.KernelPhase) func(protocol.Message) bool {
	return func(m protocol.Message) bool {
		s, ok := m.(protocol.KernelStatus)
		return ok && s.KernelID == kernel && s.Phase == phase
	}
}

// get sends a GET to the agent's endpoint, signed as the manager signs
// (sign nil: unsigned).
func get(t *testing.T, url string, sign func(*http.Request)) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sign != nil {
		sign(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK && resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET %s: %d with content type %q, want application/problem+json", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(body), resp.StatusCode
}
