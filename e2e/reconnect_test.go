package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// awayFor is how long the agent stays dead in
// TestAgentBackAfterTheHeartbeatTimeoutIsReconciled: the literal
// scenario, twelve heartbeat timeouts of that test.
const awayFor = 60 * time.Second

// remoteAgent runs `cairn agent` against d's bus as a second machine
// would (with bus credentials issued from the manager's keys, kept in dir
// across restarts), beating every second so that a short heartbeat timeout
// only trips when it is really gone.
func remoteAgent(t *testing.T, d *devServer, uri, dir string) *proc {
	t.Helper()
	creds := filepath.Join(dir, "agent.creds")
	if _, err := os.Stat(creds); errors.Is(err, os.ErrNotExist) {
		runCairn(t, "bus", "agent-credentials", "--data-dir", d.dataDir, "--agent-id", d.agentID, "--out", creds)
	}
	return startProc(t, "cairn-agent", "agent", "--bus", d.natsURL, "--bus-credentials", creds, "--agent-id", d.agentID,
		"--data-dir", dir, "--podman", uri, "--listen", "127.0.0.1:0", "--heartbeat-interval", "1s")
}

// TestAgentBackAfterTheHeartbeatTimeoutIsReconciled (issue #13, item 4):
// an agent killed with SIGKILL for 60 s, far past the heartbeat timeout
// (5 s here), while a session runs. Meanwhile the session shows
// DISCONNECTED, the agent disconnected, and the container keeps running.
// Restarted, the agent is reconciled, not killed: the session is RUNNING
// again (agent-reconnected) in the same container, which still runs, and
// the agent still manages it (termination).
func TestAgentBackAfterTheHeartbeatTimeoutIsReconciled(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri, "--no-agent", "--heartbeat-timeout", "5s", "--agent-lost-timeout", "10m")
	agentDir := t.TempDir()

	agent := remoteAgent(t, d, uri, agentDir)
	d.awaitAgent(d.agentID, "alive", func(a agentStatus) bool { return a.Status == "alive" })
	c := d.create(map[string]any{
		"command":   "sh -c 'echo hello; sleep 600'",
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	})
	before := d.awaitStatus(c.ID, c.Position, "RUNNING").Kernels[0]

	agent.kill9()
	killedAt := time.Now()
	s := d.awaitStatus(c.ID, 0, "DISCONNECTED")
	if s.StatusReason != "agent-disconnected" {
		t.Fatalf("disconnected session: %s", s)
	}
	d.awaitAgent(d.agentID, "disconnected", func(a agentStatus) bool { return a.Status == "disconnected" })
	if info := inspect(t, uri, before.ContainerID); !info.State.Running {
		t.Fatalf("container %s is %s while the agent is away, want running", before.ContainerID, info.State.Status)
	}

	// The scenario itself, not a synchronisation: the agent stays dead for
	// awayFor. Nothing may change meanwhile.
	time.Sleep(time.Until(killedAt.Add(awayFor)))
	if s := d.get(c.ID, 0); s.Status != "DISCONNECTED" {
		t.Fatalf("session after %s away: %s, want still DISCONNECTED", awayFor, s)
	}

	remoteAgent(t, d, uri, agentDir)
	after := d.awaitStatus(c.ID, 0, "RUNNING")
	if after.StatusReason != "agent-reconnected" {
		t.Fatalf("reconnected session: %s", after)
	}
	if got := after.Kernels[0].ContainerID; got != before.ContainerID {
		t.Fatalf("container id %s after the return, want the same %s", got, before.ContainerID)
	}
	if info := inspect(t, uri, before.ContainerID); !info.State.Running || info.ID != before.ContainerID {
		t.Fatalf("container after the return: %+v, want %s running", info, before.ContainerID)
	}
	d.awaitAgent(d.agentID, "alive again", func(a agentStatus) bool { return a.Status == "alive" })

	pos := d.terminate(c.ID)
	d.awaitStatus(c.ID, pos, "TERMINATED")
	if containerExists(t, uri, before.ContainerID) {
		t.Errorf("container %s still exists after the session TERMINATED", before.ContainerID)
	}
}

// TestAgentBackAfterTheLostTimeoutHasItsKernelsRemoved: an agent away
// longer than the lost timeout was given up on: its session is in ERROR
// (agent-lost) and, when the agent comes back, it removes the kernel the
// manager no longer holds.
func TestAgentBackAfterTheLostTimeoutHasItsKernelsRemoved(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	// Timeouts far above the agent's 1 s heartbeat, so that a loaded machine
	// does not give a live agent up before the kill.
	d := startDev(t, uri, "--no-agent", "--heartbeat-timeout", "5s", "--agent-lost-timeout", "20s")
	agentDir := t.TempDir()

	agent := remoteAgent(t, d, uri, agentDir)
	d.awaitAgent(d.agentID, "alive", func(a agentStatus) bool { return a.Status == "alive" })
	c := d.create(map[string]any{
		"command":   "sh -c 'sleep 600'",
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	})
	before := d.awaitStatus(c.ID, c.Position, "RUNNING").Kernels[0]

	agent.kill9()
	s := d.await(c.ID, 0, "ERROR", func(s session) bool { return s.Status == "ERROR" })
	if s.StatusReason != "agent-lost" {
		t.Fatalf("session given up on: %s", s)
	}
	d.awaitAgent(d.agentID, "lost", func(a agentStatus) bool { return a.Status == "lost" })
	if info := inspect(t, uri, before.ContainerID); !info.State.Running {
		t.Fatalf("container %s is %s before the agent returns, want running", before.ContainerID, info.State.Status)
	}

	remoteAgent(t, d, uri, agentDir)
	d.awaitAgent(d.agentID, "alive again", func(a agentStatus) bool { return a.Status == "alive" })
	awaitContainerGone(t, uri, before.ContainerID)
	if s := d.get(c.ID, 0); s.Status != "ERROR" || s.StatusReason != "agent-lost" {
		t.Fatalf("session after the return: %s", s)
	}
}
