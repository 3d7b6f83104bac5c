package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// waitTimeout bounds every wait for a session to reach a state.
const waitTimeout = 90 * time.Second

// devServer is a running `cairn dev`.
type devServer struct {
	*proc
	t       testing.TB
	dataDir string
	podman  string
	// agentID is the local agent's id, or the one the test gives its
	// separate agent (--no-agent).
	agentID string
	api     string
	token   string
	natsURL string
	client  *http.Client
}

var busLine = regexp.MustCompile(`^\s+bus\s+(nats://\S+)`)

// newAgentID is an agent id of the test's own, so that it only ever sees
// (and removes) its own containers on a shared Podman.
func newAgentID(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "e2e-" + hex.EncodeToString(b[:])
}

// startDev starts `cairn dev` on free ports with its data in a temporary
// directory, waits until it serves, and reads its credentials. extra are
// more flags (--no-agent...). The containers of its agent id are removed
// when the test ends.
func startDev(t testing.TB, podmanURI string, extra ...string) *devServer {
	t.Helper()
	return startDevBin(t, cairnBin, podmanURI, extra...)
}

// startDevBin is startDev of another build of cairn, bin.
func startDevBin(t testing.TB, bin, podmanURI string, extra ...string) *devServer {
	t.Helper()
	d := &devServer{t: t, dataDir: filepath.Join(t.TempDir(), "data"), podman: podmanURI, agentID: newAgentID(t),
		client: &http.Client{Timeout: 2 * time.Minute}}
	removeContainersAtEnd(t, podmanURI, d.agentID)
	args := append([]string{"dev",
		"--listen", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0",
		"--data-dir", d.dataDir, "--agent-id", d.agentID, "--podman", podmanURI,
	}, extra...)
	d.proc = startProcBin(t, bin, "cairn-dev", args...)
	d.natsURL = d.waitLine(busLine)[1]

	raw, err := os.ReadFile(filepath.Join(d.dataDir, "credentials.json"))
	if err != nil {
		t.Fatalf("credentials.json: %v", err)
	}
	var creds struct {
		APIURL string `json:"api_url"`
		Token  string `json:"token"`
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		t.Fatalf("credentials.json: %v", err)
	}
	if creds.APIURL == "" || creds.Token == "" {
		t.Fatalf("credentials.json lacks api_url or token: %s", raw)
	}
	if fi, err := os.Stat(filepath.Join(d.dataDir, "credentials.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials.json mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	d.api, d.token = creds.APIURL, creds.Token
	var health struct {
		Status string `json:"status"`
	}
	d.call("GET", "/healthz", nil, http.StatusOK, &health)
	if health.Status != "ok" {
		t.Fatalf("/healthz status %q", health.Status)
	}
	return d
}

// call sends a request with the token and checks the status; the JSON
// answer is decoded into out (nil: not decoded). It returns the body.
func (d *devServer) call(method, path string, body any, wantStatus int, out any) []byte {
	d.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			d.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.api+path, r)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != wantStatus {
		d.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, wantStatus, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			d.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return raw
}

// session is what the tests read of GET /v1/sessions/{id}.
type session struct {
	ID             string   `json:"id"`
	Status         string   `json:"status"`
	StatusReason   string   `json:"status_reason"`
	PendingDetails []string `json:"pending_details"`
	Result         string   `json:"result"`
	ExitCode       *int     `json:"exit_code"`
	Position       uint64   `json:"position"`
	Kernels        []kernel `json:"kernels"`
}

type kernel struct {
	ID          string `json:"id"`
	AgentID     string `json:"agent_id"`
	ContainerID string `json:"container_id"`
	Status      string `json:"status"`
}

func (s session) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// created is the answer of POST /v1/sessions.
type created struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Position uint64 `json:"position"`
}

// create requests a session on the base image.
func (d *devServer) create(body map[string]any) created {
	d.t.Helper()
	if _, ok := body["image"]; !ok {
		body["image"] = podmantest.DefaultImage
	}
	var c created
	d.call("POST", "/v1/sessions", body, http.StatusCreated, &c)
	if c.ID == "" || c.Status != "PENDING" || c.Position == 0 {
		d.t.Fatalf("POST /v1/sessions answered %+v", c)
	}
	return c
}

// get reads a session once the read models reflect position.
func (d *devServer) get(id string, position uint64) session {
	d.t.Helper()
	var s session
	d.call("GET", fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", id, position), nil, http.StatusOK, &s)
	return s
}

// await reads the session, once the read models reflect position (the
// position its creation or last command returned), until cond holds (the
// API has no change feed yet: it polls) and returns it.
func (d *devServer) await(id string, position uint64, what string, cond func(session) bool) session {
	d.t.Helper()
	var s session
	defer func() {
		if d.t.Failed() {
			d.t.Logf("session %s: last seen %s", id, s)
		}
	}()
	await.Until(d.t, waitTimeout, "session "+id+" "+what, func() bool {
		s = d.get(id, position)
		return cond(s)
	})
	return s
}

// awaitStatus waits for a status; a terminal status other than want
// fails at once.
func (d *devServer) awaitStatus(id string, position uint64, want string) session {
	d.t.Helper()
	s := d.await(id, position, want, func(s session) bool {
		if s.Status != want && terminal(s.Status) {
			d.t.Fatalf("session %s ended %s (%s) while waiting for %s: %s", id, s.Status, s.StatusReason, want, s)
		}
		return s.Status == want
	})
	return s
}

func terminal(status string) bool {
	switch status {
	case "TERMINATED", "CANCELLED", "ERROR":
		return true
	}
	return false
}

// as returns d for a subtest: failures are reported to t.
func (d *devServer) as(t testing.TB) *devServer {
	c := *d
	c.t = t
	return &c
}

// logs reads GET /v1/sessions/{id}/logs: the status and the body.
func (d *devServer) logs(id string) (int, string) {
	d.t.Helper()
	req, err := http.NewRequest("GET", d.api+"/v1/sessions/"+id+"/logs", nil)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("GET logs: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatalf("GET logs: %v", err)
	}
	return resp.StatusCode, string(raw)
}

// awaitLogs reads the logs until they contain want: the process may not
// have written yet when the session turns RUNNING, and an agent being
// restarted answers 503 until it is back.
func (d *devServer) awaitLogs(id, want string) {
	d.t.Helper()
	var status int
	var got string
	defer func() {
		if d.t.Failed() {
			d.t.Logf("logs of session %s: last answer %d %q", id, status, got)
		}
	}()
	await.Until(d.t, waitTimeout, fmt.Sprintf("%q in the logs of session %s", want, id), func() bool {
		status, got = d.logs(id)
		if status != http.StatusOK && status != http.StatusServiceUnavailable {
			d.t.Fatalf("GET /v1/sessions/%s/logs: status %d: %s", id, status, got)
		}
		return status == http.StatusOK && strings.Contains(got, want)
	})
}

// terminate sends DELETE /v1/sessions/{id} and returns the position of
// the command.
func (d *devServer) terminate(id string) uint64 {
	d.t.Helper()
	var res struct {
		Position uint64 `json:"position"`
	}
	d.call("DELETE", "/v1/sessions/"+id, nil, http.StatusAccepted, &res)
	if res.Position == 0 {
		d.t.Fatalf("DELETE /v1/sessions/%s answered no position", id)
	}
	return res.Position
}

// agentStatus is what the tests read of GET /v1/agents.
type agentStatus struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	LastSeenAt time.Time `json:"last_seen_at"`
}

// awaitAgent waits until the agent is listed with a status and cond.
func (d *devServer) awaitAgent(id, what string, cond func(agentStatus) bool) agentStatus {
	d.t.Helper()
	var list struct {
		Items []agentStatus `json:"items"`
	}
	defer func() {
		if d.t.Failed() {
			d.t.Logf("agents: %+v", list.Items)
		}
	}()
	var found agentStatus
	await.Until(d.t, waitTimeout, "agent "+id+" "+what, func() bool {
		list.Items = nil
		d.call("GET", "/v1/agents", nil, http.StatusOK, &list)
		for _, a := range list.Items {
			if a.ID == id && cond(a) {
				found = a
				return true
			}
		}
		return false
	})
	return found
}
