package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/domain"
)

// httpdCommand serves /www with busybox httpd on port 8080: an index and
// 300 kB of random bytes.
var httpdCommand = []string{"sh", "-c",
	"mkdir -p /www && echo hello > /www/index.html && head -c 300000 /dev/urandom > /www/blob && exec busybox httpd -f -p 8080 -h /www"}

// fetch GETs url (signed as the manager when sign is set) and returns the
// status and body; a connection error is status 0.
func fetch(t *testing.T, ctx context.Context, url string, sign func(*http.Request)) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sign != nil {
		sign(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil
	}
	return res.StatusCode, body
}

// A kernel's service ports are published on loopback host ports of the
// agent's range, skipping a port something else holds, distinct between
// kernels, reported when it runs, reachable through the agent's endpoint
// with a signed request only, kept by a restarted agent, and freed for
// other kernels once it is removed.
func TestServicePorts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Listen = "127.0.0.1:0"
	// A range of its own, whose first port something else holds.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	first := held.Addr().(*net.TCPAddr).Port
	cfg.AppPortRange = node.PortRange{First: first, Last: first + 40}
	_, stop := h.runAgent(cfg)
	reg := h.register(0)

	web := h.create(httpdCommand...)
	web.ServicePorts = []domain.ServicePort{{Name: "web", Protocol: "http", Port: 8080}, {Name: "port-9000", Protocol: "preopen", Port: 9000}}
	other := h.create("sleep", "60")
	other.ServicePorts = []domain.ServicePort{{Name: "web", Protocol: "http", Port: 8080}}
	h.send(web)
	running := h.status(0, web.KernelID, domain.PhaseRunning)
	h.send(other)
	otherRunning := h.status(0, other.KernelID, domain.PhaseRunning)

	ports := running.ServicePorts
	if len(ports) != 2 || ports[0].Name != "web" || ports[0].ContainerPort != 8080 || ports[1].Name != "port-9000" || ports[1].Protocol != "preopen" {
		t.Fatalf("running report's ports = %+v", ports)
	}
	hostPorts := map[int]bool{}
	for _, p := range append(append([]domain.PublishedPort{}, ports...), otherRunning.ServicePorts...) {
		if p.HostPort == first || p.HostPort < first || p.HostPort > first+40 {
			t.Errorf("host port %d: want one in %d-%d but the held %d", p.HostPort, first, first+40, first)
		}
		if hostPorts[p.HostPort] {
			t.Errorf("host port %d is given twice", p.HostPort)
		}
		hostPorts[p.HostPort] = true
	}

	// Podman publishes them on 127.0.0.1 only.
	bindings := h.inspect(running.ContainerID).HostConfig.PortBindings
	if b := bindings["8080/tcp"]; len(b) != 1 || b[0].HostIP != "127.0.0.1" || b[0].HostPort != strconv.Itoa(ports[0].HostPort) {
		t.Errorf("port bindings = %+v, want 8080/tcp on 127.0.0.1:%d", bindings, ports[0].HostPort)
	}
	// The app token: in the kernel's environment and in its record, which
	// only the agent's user reads.
	token := envOf(h.inspect(running.ContainerID))[node.EnvAppToken]
	if len(token) != 64 {
		t.Errorf("%s = %q, want 64 hex digits", node.EnvAppToken, token)
	}
	recordPath := filepath.Join(cfg.DataDir, "kernels", web.KernelID.String()+".json")
	if fi, err := os.Stat(recordPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record %s: %v, %v; want mode 0600", recordPath, fi, err)
	}
	if data, err := os.ReadFile(recordPath); err != nil || !bytes.Contains(data, []byte(token)) {
		t.Errorf("the record does not keep the app token: %v", err)
	}

	// Through the agent, signed: the bytes the app serves, unchanged.
	appURL := func(address string, port int, path string) string {
		return address + "/kernels/" + web.KernelID.String() + "/apps/" + strconv.Itoa(port) + path
	}
	var direct, through []byte
	h.eventually("the app to answer through the agent", func() bool {
		status, body := fetch(t, h.ctx, appURL(reg.Address, 8080, "/blob"), h.signAs(h.agentID))
		through = body
		return status == http.StatusOK
	})
	status, direct := fetch(t, h.ctx, "http://127.0.0.1:"+strconv.Itoa(ports[0].HostPort)+"/blob", nil)
	if status != http.StatusOK || len(direct) != 300000 || !bytes.Equal(direct, through) {
		t.Errorf("through the agent %d bytes, straight %d bytes (status %d): want the same 300000", len(through), len(direct), status)
	}
	if status, _ := fetch(t, h.ctx, appURL(reg.Address, 8080, "/index.html"), nil); status != http.StatusUnauthorized {
		t.Errorf("unsigned: %d, want 401", status)
	}
	if status, _ := fetch(t, h.ctx, appURL(reg.Address, 8081, "/index.html"), h.signAs(h.agentID)); status != http.StatusNotFound {
		t.Errorf("a port not published: %d, want 404", status)
	}
	status, body := fetch(t, h.ctx, appURL(reg.Address, 9000, "/"), h.signAs(h.agentID))
	var p struct{ Detail string }
	if status != http.StatusBadGateway || json.Unmarshal(body, &p) != nil || p.Detail == "" {
		t.Errorf("a published port nothing listens on: %d %s, want 502 with a detail", status, body)
	}

	// A restarted agent keeps the adopted kernel's ports, and serves them.
	stop()
	mark := h.reports.mark()
	_, _ = h.runAgent(cfg)
	reg = h.register(mark)
	again := h.status(mark, web.KernelID, domain.PhaseRunning)
	if len(again.ServicePorts) != 2 || again.ServicePorts[0] != ports[0] || again.ServicePorts[1] != ports[1] {
		t.Errorf("after a restart: ports %+v, were %+v", again.ServicePorts, ports)
	}
	if status, body := fetch(t, h.ctx, appURL(reg.Address, 8080, "/index.html"), h.signAs(h.agentID)); status != http.StatusOK || string(body) != "hello\n" {
		t.Errorf("after a restart: %d %q", status, body)
	}

	// Removed: its ports are free, and a new kernel gets them.
	mark = h.reports.mark()
	h.send(h.destroy(web))
	h.status(mark, web.KernelID, domain.PhaseRemoved)
	if status, _ := fetch(t, h.ctx, appURL(reg.Address, 8080, "/index.html"), h.signAs(h.agentID)); status != http.StatusNotFound {
		t.Errorf("a removed kernel's app: %d, want 404", status)
	}
	next := h.create("sleep", "60")
	next.ServicePorts = []domain.ServicePort{{Name: "a", Protocol: "http", Port: 1}, {Name: "b", Protocol: "tcp", Port: 2}}
	h.send(next)
	reused := h.status(mark, next.KernelID, domain.PhaseRunning).ServicePorts
	if len(reused) != 2 || !hostPorts[reused[0].HostPort] || !hostPorts[reused[1].HostPort] {
		t.Errorf("a new kernel's ports %+v: want the removed kernel's %+v back", reused, ports)
	}
	for _, p := range reused {
		for _, q := range otherRunning.ServicePorts {
			if p.HostPort == q.HostPort {
				t.Errorf("host port %d is the running kernel's", p.HostPort)
			}
		}
	}
}
