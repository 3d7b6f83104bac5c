package node_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// A restarted agent adopts its containers: a running kernel keeps running
// in the same container and is reported running again; one that exited
// while the agent was away has its exit reported.
func TestRestartAdopts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	_, stop := h.runAgent(cfg)
	sleeper := h.create("sh", "-c", "echo started; sleep 60")
	killed := h.create("sleep", "60")
	h.send(sleeper)
	h.send(killed)
	first := h.status(0, sleeper.KernelID, domain.PhaseRunning)
	victim := h.status(0, killed.KernelID, domain.PhaseRunning)
	startedAt := h.inspect(first.ContainerID).State.StartedAt

	stop() // checks that Run returned nil
	for _, c := range h.containers() {
		if c.State != runtime.StateRunning {
			t.Fatalf("stopping the agent stopped %s (%s)", c.Name, c.State)
		}
	}
	// While the agent is away, one kernel dies.
	if err := containers.Kill(h.conn, victim.ContainerID, &containers.KillOptions{Signal: ptr("KILL")}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the killed kernel to exit", func() bool {
		c, err := h.rt.Inspect(h.ctx, victim.ContainerID)
		return err == nil && c.State == runtime.StateExited
	})

	mark := h.reports.mark()
	a, _ := h.runAgent(cfg)
	reg := h.register(mark)
	slices.SortFunc(reg.Kernels, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	want := []uuid.UUID{sleeper.KernelID, killed.KernelID}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	if !slices.Equal(reg.Kernels, want) {
		t.Errorf("agent.register kernels = %v, want %v", reg.Kernels, want)
	}
	again := h.status(mark, sleeper.KernelID, domain.PhaseRunning)
	if again.ContainerID != first.ContainerID {
		t.Errorf("adopted kernel runs in %s, ran in %s", again.ContainerID, first.ContainerID)
	}
	if data := h.inspect(first.ContainerID); !data.State.Running || !data.State.StartedAt.Equal(startedAt) {
		t.Errorf("adopted container: running %v since %v, want running since %v", data.State.Running, data.State.StartedAt, startedAt)
	}
	if ex := h.status(mark, killed.KernelID, domain.PhaseExited); ex.ExitCode != 137 || ex.ContainerID != victim.ContainerID {
		t.Errorf("exit while away = %+v, want exit code 137", ex)
	}
	if n := h.reports.count(mark, isPhase(sleeper.KernelID, domain.PhasePreparing)); n != 0 {
		t.Error("the adopted kernel was created again")
	}

	// The new agent looks after it: logs, heartbeats, destroy.
	logs, err := a.Logs(h.ctx, sleeper.KernelID, runtime.LogOptions{})
	if err != nil || !strings.Contains(string(logs), "started\n") {
		t.Errorf("logs of the adopted kernel = %q, %v", logs, err)
	}
	h.reports.await(t, mark, "a heartbeat with the adopted kernel", func(m protocol.Message) bool {
		hb, ok := m.(protocol.AgentHeartbeat)
		return ok && slices.Equal(hb.Running, []uuid.UUID{sleeper.KernelID})
	})
	mark = h.reports.mark()
	h.send(h.destroy(sleeper))
	h.send(h.destroy(killed))
	h.status(mark, sleeper.KernelID, domain.PhaseRemoved)
	h.status(mark, killed.KernelID, domain.PhaseRemoved)
	if cs := h.containers(); len(cs) != 0 {
		t.Errorf("containers after destroy = %+v", cs)
	}
}

// A kernel.sync removes the containers of kernels no allocation holds
// (orphans), keeps those it lists and those allocated after it was read,
// and re-reports the listed ones. Before it, nothing found at start is
// removed.
func TestSyncRemovesOrphans(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	_, stop := h.runAgent(cfg)
	kept, orphan, late := h.create("sleep", "60"), h.create("sleep", "60"), h.create("sleep", "60")
	kept.AllocationRevision, orphan.AllocationRevision, late.AllocationRevision = 1, 2, 9
	for _, m := range []protocol.KernelCreate{kept, orphan, late} {
		h.send(m)
		h.status(0, m.KernelID, domain.PhaseRunning)
	}
	stop()

	// The allocation revisions survive on the containers' labels.
	mark := h.reports.mark()
	h.runAgent(cfg)
	h.register(mark)
	for _, m := range []protocol.KernelCreate{kept, orphan, late} {
		h.status(mark, m.KernelID, domain.PhaseRunning)
	}
	if cs := h.containers(); len(cs) != 3 {
		t.Fatalf("before a sync: %d containers, want 3", len(cs))
	}

	mark = h.reports.mark()
	h.send(protocol.KernelSync{AgentID: h.agentID, Kernels: []uuid.UUID{kept.KernelID}, AsOfRevision: 5, At: time.Now().UTC()})
	removed := h.status(mark, orphan.KernelID, domain.PhaseRemoved)
	if removed.Reason != "orphaned" {
		t.Errorf("orphan report = %+v", removed)
	}
	h.status(mark, kept.KernelID, domain.PhaseRunning)
	var left []uuid.UUID
	for _, c := range h.containers() {
		left = append(left, uuid.MustParse(c.KernelID))
		if c.State != runtime.StateRunning {
			t.Errorf("%s is %s", c.Name, c.State)
		}
	}
	if len(left) != 2 || !slices.Contains(left, kept.KernelID) || !slices.Contains(left, late.KernelID) {
		t.Errorf("after the sync: kernels %v, want %s and %s", left, kept.KernelID, late.KernelID)
	}

	// The orphan's kernel.create, redelivered, creates nothing.
	mark = h.reports.mark()
	h.send(orphan)
	h.status(mark, orphan.KernelID, domain.PhaseRemoved)
	if cs := h.containers(); len(cs) != 2 {
		t.Errorf("after a late create of the orphan: %d containers", len(cs))
	}
}

// A kernel.create the agent accepted just before it died (recorded, no
// container yet) is carried out after the restart.
func TestPendingCreateResumes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	create := h.create("sleep", "60")
	// What the agent writes in <data dir>/kernels when it accepts a create.
	rec, err := json.Marshal(map[string]any{
		"kernel_id": create.KernelID, "session_id": create.SessionID, "state": "pending", "create": create, "updated_at": time.Now().UTC(),
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfg.DataDir, "kernels")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, create.KernelID.String()+".json"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	h.runAgent(cfg)
	running := h.status(0, create.KernelID, domain.PhaseRunning)
	if cs := h.containers(); len(cs) != 1 || cs[0].ID != running.ContainerID {
		t.Errorf("containers = %+v", cs)
	}
}

func ptr[T any](v T) *T { return &v }
