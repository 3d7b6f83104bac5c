package podman

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// A running kernel gets what its spec asks for, and Ensure and Start are
// idempotent on it.
func TestRunningKernel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.spec("sh", "-c", `echo hello
cat /sys/fs/cgroup/memory/memory.limit_in_bytes
cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us
ulimit -n
echo "$CAIRN_GREETING"
echo ready
sleep 30`)
	spec.MemoryBytes = 64 << 20
	spec.CPU = 500
	spec.Env = map[string]string{"CAIRN_GREETING": "hi there"}
	spec.Labels = map[string]string{"org.example.team": "ml"}

	c := h.run(spec)
	if c.Name != runtime.ContainerName(spec.KernelID) {
		t.Errorf("name = %q, want %q", c.Name, runtime.ContainerName(spec.KernelID))
	}

	got, err := h.rt.Inspect(h.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != runtime.StateRunning || got.StartedAt.IsZero() {
		t.Errorf("after start: state %q, started %v; want running", got.State, got.StartedAt)
	}
	if got.KernelID != spec.KernelID || got.SessionID != spec.SessionID || got.AgentID != spec.AgentID {
		t.Errorf("ids from labels = %q/%q/%q, want %q/%q/%q", got.KernelID, got.SessionID, got.AgentID, spec.KernelID, spec.SessionID, spec.AgentID)
	}
	for k, v := range map[string]string{
		runtime.LabelKernel: spec.KernelID, runtime.LabelSession: spec.SessionID,
		runtime.LabelAgent: spec.AgentID, runtime.LabelManaged: "true", "org.example.team": "ml",
	} {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
		}
	}

	// What Podman made of the spec.
	data, err := containers.Inspect(h.rt.call(h.ctx), c.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := data.HostConfig
	if hc.Memory != 64<<20 {
		t.Errorf("HostConfig.Memory = %d, want %d", hc.Memory, 64<<20)
	}
	if hc.CpuQuota != 50_000 || hc.CpuPeriod != 100_000 {
		t.Errorf("CPU quota/period = %d/%d, want 50000/100000", hc.CpuQuota, hc.CpuPeriod)
	}
	if hc.RestartPolicy == nil || hc.RestartPolicy.Name != "no" {
		t.Errorf("restart policy = %+v, want no", hc.RestartPolicy)
	}
	if hc.LogConfig == nil || hc.LogConfig.Type != logDriver {
		t.Errorf("log config = %+v, want %s", hc.LogConfig, logDriver)
	}
	if !hasOption(hc.SecurityOpt, "no-new-privileges") {
		t.Errorf("security options = %v, want no-new-privileges", hc.SecurityOpt)
	}
	rlimits := map[string]int64{}
	for _, u := range hc.Ulimits {
		rlimits[u.Name] = u.Hard
	}
	if rlimits["RLIMIT_NOFILE"] != 1024 || rlimits["RLIMIT_NPROC"] != 1024 {
		t.Errorf("ulimits = %+v, want nofile and nproc 1024", hc.Ulimits)
	}

	// What the kernel sees.
	logs := h.logsUntil(c.ID, "ready")
	for _, want := range []string{"hello", strconv.Itoa(64 << 20), "50000", "1024", "hi there"} {
		if !containsLine(logs, want) {
			t.Errorf("logs lack the line %q:\n%s", want, logs)
		}
	}

	// Ensure again: the same container, not a new one.
	again, created, err := h.rt.Ensure(h.ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if created || again.ID != c.ID {
		t.Errorf("second ensure: id %s created %v, want %s and false", again.ID, created, c.ID)
	}
	// Start again: nothing happens to the running kernel.
	if err := h.rt.Start(h.ctx, c.Name); err != nil {
		t.Fatalf("second start: %v", err)
	}
	after, err := h.rt.Inspect(h.ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if after.State != runtime.StateRunning || !after.StartedAt.Equal(got.StartedAt) {
		t.Errorf("after a second start: state %q started %v, want running since %v", after.State, after.StartedAt, got.StartedAt)
	}

	// The agent finds it by its id (adoption after a restart).
	list, err := h.rt.List(h.ctx, h.agentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != c.ID || list[0].KernelID != spec.KernelID || list[0].State != runtime.StateRunning {
		t.Errorf("list = %+v, want just %s running", list, c.ID)
	}
}

// A batch kernel's exit code comes back from Wait; its logs, stdout and
// stderr interleaved, stay readable after it exits; and Start never runs
// it a second time.
func TestExitedKernel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.spec("sh", "-c", "echo out; echo err >&2; echo more; exit 3")
	c := h.run(spec)

	code, err := h.rt.Wait(h.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit code = %d, want 3", code)
	}
	done, err := h.rt.Inspect(h.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != runtime.StateExited || done.ExitCode != 3 || done.FinishedAt.IsZero() {
		t.Errorf("after exit: %+v, want exited with 3 and a finish time", done)
	}
	// Waiting again on an exited kernel returns at once.
	if code, err := h.rt.Wait(h.ctx, c.ID); err != nil || code != 3 {
		t.Errorf("second wait = %d, %v; want 3", code, err)
	}

	logs, err := h.rt.Logs(h.ctx, c.ID, runtime.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each stream keeps its order; between the two, Podman records what
	// it read first, which need not be what was written first.
	lines := strings.Split(strings.TrimSuffix(string(logs), "\n"), "\n")
	if got := strings.Join(slices.Sorted(slices.Values(lines)), ","); got != "err,more,out" ||
		slices.Index(lines, "out") > slices.Index(lines, "more") {
		t.Errorf("logs after exit = %q, want the lines out, more (in this order) and err", logs)
	}

	if err := h.rt.Start(h.ctx, c.ID); err != nil {
		t.Fatalf("start of an exited kernel: %v", err)
	}
	again, err := h.rt.Inspect(h.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.State != runtime.StateExited || !again.StartedAt.Equal(done.StartedAt) {
		t.Errorf("start re-ran an exited kernel: %+v", again)
	}
}

// Logs keeps the tail: the last lines, then the last bytes.
func TestLogLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec("sh", "-c", "i=1; while [ $i -le 100 ]; do echo line$i; i=$((i+1)); done"))
	if _, err := h.rt.Wait(h.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts runtime.LogOptions
		want string
	}{
		{runtime.LogOptions{Tail: 2}, "line99\nline100\n"},
		{runtime.LogOptions{MaxBytes: 8}, "line100\n"},
		{runtime.LogOptions{Tail: 3, MaxBytes: 12}, "e99\nline100\n"},
	} {
		got, err := h.rt.Logs(h.ctx, c.ID, tc.opts)
		if err != nil {
			t.Fatalf("logs %+v: %v", tc.opts, err)
		}
		if string(got) != tc.want {
			t.Errorf("logs %+v = %q, want %q", tc.opts, got, tc.want)
		}
	}
	all, err := h.rt.Logs(h.ctx, c.ID, runtime.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(all), "\n"); lines != 100 {
		t.Errorf("all logs have %d lines, want 100", lines)
	}
	if _, err := h.rt.Logs(h.ctx, c.ID, runtime.LogOptions{Tail: -1}); !errors.Is(err, runtime.ErrInvalid) {
		t.Errorf("negative tail: %v, want ErrInvalid", err)
	}
}

// hasOption reports whether list holds the option want, bare or with a
// value.
func hasOption(list []string, want string) bool {
	for _, s := range list {
		if s == want || strings.HasPrefix(s, want+"=") || strings.HasPrefix(s, want+":") {
			return true
		}
	}
	return false
}
