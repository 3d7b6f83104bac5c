package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/await"
)

// podman runs the podman CLI against the service the agents use (not the
// agents' code: an outside view of the containers).
func podman(uri string, args ...string) ([]byte, error) {
	cmd := exec.Command("podman", append([]string{"--url", uri}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.Join(err, errors.New(strings.TrimSpace(stderr.String())))
	}
	return out, nil
}

// containerInfo is what the tests read of `podman container inspect`.
type containerInfo struct {
	ID    string `json:"Id"`
	State struct {
		Status  string `json:"Status"`
		Running bool   `json:"Running"`
	} `json:"State"`
	Config struct {
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
	HostConfig struct {
		Memory int64 `json:"Memory"`
	} `json:"HostConfig"`
}

// containerExists asks Podman whether the container exists.
func containerExists(t testing.TB, uri, id string) bool {
	t.Helper()
	_, err := podman(uri, "container", "exists", id)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false
	}
	t.Fatalf("podman container exists %s: %v", id, err)
	return false
}

// awaitContainerGone waits until the container no longer exists.
func awaitContainerGone(t testing.TB, uri, id string) {
	t.Helper()
	await.Until(t, waitTimeout, "container "+id+" to be gone", func() bool { return !containerExists(t, uri, id) })
}

// inspect returns a container's state, limits and labels.
func inspect(t testing.TB, uri, id string) containerInfo {
	t.Helper()
	out, err := podman(uri, "container", "inspect", id)
	if err != nil {
		t.Fatalf("podman container inspect %s: %v", id, err)
	}
	var infos []containerInfo
	if err := json.Unmarshal(out, &infos); err != nil || len(infos) != 1 {
		t.Fatalf("podman container inspect %s: %v: %s", id, err, out)
	}
	return infos[0]
}

// removeContainersAtEnd removes, when the test ends, every container
// labelled with the agent id (stopping an agent leaves its containers
// running, by design), and says how many a passing test left behind.
func removeContainersAtEnd(t testing.TB, uri, agentID string) {
	t.Helper()
	t.Cleanup(func() {
		out, err := podman(uri, "ps", "-a", "-q", "--filter", "label=cairn.agent="+agentID)
		if err != nil {
			t.Errorf("list the containers of %s: %v", agentID, err)
			return
		}
		ids := strings.Fields(string(out))
		if len(ids) == 0 {
			return
		}
		t.Logf("removing %d container(s) of agent %s left behind", len(ids), agentID)
		if _, err := podman(uri, append([]string{"rm", "-f", "-t", "0"}, ids...)...); err != nil {
			t.Errorf("remove the containers of %s: %v", agentID, err)
		}
	})
}
