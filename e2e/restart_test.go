package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestAgentRestartAdoptsRunningKernel runs the agent as a process of its
// own (`cairn dev --no-agent` plus `cairn agent` on its bus, as a second
// machine would), kills it with SIGKILL while a session runs, and starts it
// again: the kernel keeps running in the same container, the session stays
// RUNNING, and the restarted agent still manages it (logs, termination).
func TestAgentRestartAdoptsRunningKernel(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri, "--no-agent")
	agentDir := t.TempDir()
	// The agent's bus credentials, issued from the manager's keys.
	creds := filepath.Join(agentDir, "agent.creds")
	runCairn(t, "bus", "agent-credentials", "--data-dir", d.dataDir, "--agent-id", d.agentID, "--out", creds)
	startAgent := func() *proc {
		// --listen on a free port: the agent announces its logs endpoint,
		// which the manager reads the logs through.
		return startProc(t, "cairn-agent", "agent", "--bus", d.natsURL, "--bus-credentials", creds, "--agent-id", d.agentID,
			"--data-dir", agentDir, "--podman", uri, "--listen", "127.0.0.1:0")
	}

	agent := startAgent()
	d.awaitAgent(d.agentID, "alive", func(a agentStatus) bool { return a.Status == "alive" })
	c := d.create(map[string]any{
		// Long enough to outlive the restart.
		"command":   "sh -c 'echo hello; sleep 300'",
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	})
	s := d.awaitStatus(c.ID, c.Position, "RUNNING")
	before := s.Kernels[0]
	d.awaitLogs(c.ID, "hello") // through the remote agent's endpoint

	agent.kill9()
	if info := inspect(t, uri, before.ContainerID); !info.State.Running {
		t.Fatalf("container %s is %s after the agent was killed, want running", before.ContainerID, info.State.Status)
	}

	startAgent()
	// The restarted agent listens on another port: the logs are readable
	// again once it has adopted its containers and announced itself.
	d.awaitLogs(c.ID, "hello")
	after := d.get(c.ID, 0)
	if after.Status != "RUNNING" {
		t.Fatalf("session is %s after the agent restarted, want RUNNING: %s", after.Status, after)
	}
	if got := after.Kernels[0].ContainerID; got != before.ContainerID {
		t.Fatalf("container id %s after the restart, want the same %s", got, before.ContainerID)
	}
	info := inspect(t, uri, before.ContainerID)
	if !info.State.Running || info.ID != before.ContainerID {
		t.Fatalf("container after the restart: %+v, want %s running", info, before.ContainerID)
	}

	// The restarted agent carries out the termination.
	pos := d.terminate(c.ID)
	d.awaitStatus(c.ID, pos, "TERMINATED")
	if containerExists(t, uri, before.ContainerID) {
		t.Errorf("container %s still exists after the session TERMINATED", before.ContainerID)
	}
}
