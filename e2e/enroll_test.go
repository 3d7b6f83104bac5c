package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestAgentEnrollsWithAToken runs the remote-agent path an operator
// follows: a superadmin asks for a one-time token, `cairn agent enroll`
// turns it into bus credentials in the agent's data directory, and
// `cairn agent` with only that --data-dir (no --bus-credentials) joins
// the bus and is seen alive by the manager.
func TestAgentEnrollsWithAToken(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri, "--no-agent")
	agentDir := t.TempDir()
	var offer struct {
		Token string `json:"token"`
	}
	d.call("POST", "/v1/agents/"+d.agentID+"/enrollment", map[string]any{"ttl_seconds": 600}, http.StatusCreated, &offer)
	runCairn(t, "agent", "enroll", "--api", d.api, "--agent-id", d.agentID, "--token", offer.Token, "--data-dir", agentDir)
	fi, err := os.Stat(filepath.Join(agentDir, "bus.creds"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bus.creds: %v (%v), want mode 0600", fi, err)
	}
	startProc(t, "cairn-agent", "agent", "--bus", d.natsURL, "--agent-id", d.agentID, "--data-dir", agentDir, "--podman", uri)
	d.awaitAgent(d.agentID, "alive", func(a agentStatus) bool { return a.Status == "alive" })
}
