package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestDevSessions runs sessions on one `cairn dev` with its local agent.
func TestDevSessions(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	dev := startDev(t, uri)

	t.Run("interactive session runs with its limits and labels, logs, and is terminated", func(t *testing.T) {
		t.Parallel()
		d := dev.as(t)
		c := d.create(map[string]any{
			"command":   "sh -c 'echo hello; sleep 30'",
			"resources": map[string]any{"cpu": 1, "mem": "64m"},
		})
		s := d.awaitStatus(c.ID, c.Position, "RUNNING")
		if len(s.Kernels) != 1 {
			t.Fatalf("kernels: %s", s)
		}
		k := s.Kernels[0]
		if k.ContainerID == "" || k.AgentID != d.agentID || k.Status != "RUNNING" {
			t.Fatalf("kernel of a RUNNING session: %+v (agent %s)", k, d.agentID)
		}

		info := inspect(t, uri, k.ContainerID)
		if !info.State.Running {
			t.Errorf("container %s is %s, want running", k.ContainerID, info.State.Status)
		}
		if info.HostConfig.Memory != 64<<20 {
			t.Errorf("container memory limit = %d, want %d (64 MiB)", info.HostConfig.Memory, 64<<20)
		}
		for label, want := range map[string]string{"cairn.session": s.ID, "cairn.kernel": k.ID, "cairn.agent": d.agentID} {
			if got := info.Config.Labels[label]; got != want {
				t.Errorf("label %s = %q, want %q", label, got, want)
			}
		}

		d.awaitLogs(c.ID, "hello")

		pos := d.terminate(c.ID)
		s = d.awaitStatus(c.ID, pos, "TERMINATED")
		if s.StatusReason != "user-requested" {
			t.Errorf("status reason %q, want user-requested", s.StatusReason)
		}
		if containerExists(t, uri, k.ContainerID) {
			t.Errorf("container %s still exists after the session TERMINATED", k.ContainerID)
		}
	})

	t.Run("batch session that exits 3 ends task-failed with its exit code", func(t *testing.T) {
		t.Parallel()
		d := dev.as(t)
		c := d.create(map[string]any{
			"type":      "batch",
			"command":   "sh -c 'exit 3'",
			"resources": map[string]any{"cpu": 1, "mem": "64m"},
		})
		s := d.awaitStatus(c.ID, c.Position, "TERMINATED")
		if s.ExitCode == nil || *s.ExitCode != 3 {
			t.Errorf("exit code %v, want 3: %s", s.ExitCode, s)
		}
		if s.StatusReason != "task-failed" || s.Result != "failure" {
			t.Errorf("reason %q result %q, want task-failed failure: %s", s.StatusReason, s.Result, s)
		}
		// The session ends when its process exits; the container is
		// removed after that, when the agent gives the allocation back.
		if id := s.Kernels[0].ContainerID; id != "" {
			awaitContainerGone(t, uri, id)
		}
	})

	t.Run("session larger than any agent stays pending with the reason and can be cancelled", func(t *testing.T) {
		t.Parallel()
		d := dev.as(t)
		c := d.create(map[string]any{
			"command":   "sh -c 'sleep 30'",
			"resources": map[string]any{"cpu": 1, "mem": "100000g"},
		})
		s := d.await(c.ID, c.Position, "pending with a reason", func(s session) bool {
			if s.Status != "PENDING" {
				t.Fatalf("a session no agent can take is %s: %s", s.Status, s)
			}
			return s.StatusReason != ""
		})
		if s.StatusReason != "no-available-instances" {
			t.Errorf("status reason %q, want no-available-instances: %s", s.StatusReason, s)
		}
		if !slices.ContainsFunc(s.PendingDetails, func(d string) bool { return strings.HasPrefix(d, "mem:") }) {
			t.Errorf("pending details do not name mem: %q", s.PendingDetails)
		}
		pos := d.terminate(c.ID)
		s = d.awaitStatus(c.ID, pos, "CANCELLED")
		if len(s.Kernels) != 1 || s.Kernels[0].ContainerID != "" {
			t.Errorf("a cancelled pending session has a container: %s", s)
		}
	})
}
