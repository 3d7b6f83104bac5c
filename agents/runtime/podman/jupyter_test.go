package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	nettypes "github.com/containers/common/libnetwork/types"
	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/infra/apptest"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// jupyterTimeout bounds Jupyter's start (Python imports on a shared,
// busy machine) and the kernel's first answer.
const jupyterTimeout = 3 * time.Minute

// TestPythonImageJupyter runs the python image as a kernel runs (the
// runtime's isolation: no capabilities, its own user namespace) with
// CAIRN_APP_TOKEN and CAIRN_SESSION_ID set and the Jupyter port published
// on the host's loopback, then uses Jupyter as the app proxy will: with
// the token in an Authorization header, under the session's base URL. A
// kernel it starts prints 6*7 over the kernel's WebSocket channels; a
// request without the token, or with another, is refused.
func TestPythonImageJupyter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	image := podmantest.Python(t, h.uri)
	ctx, cancel := context.WithTimeout(context.Background(), jupyterTimeout+testTimeout)
	defer cancel()
	h.ctx = ctx

	token, sessionID := randomHex(t, 24), "s-"+randomID(t)
	spec := h.spec()
	spec.Image, spec.SessionID = image, sessionID
	spec.UserNS = &runtime.DefaultIDMap
	spec.Env = map[string]string{"CAIRN_APP_TOKEN": token, "CAIRN_SESSION_ID": sessionID}
	spec.StopGrace = 5 * time.Second
	hostPort := h.runPublished(spec, 8888)

	base := fmt.Sprintf("http://127.0.0.1:%d/v1/sessions/%s/apps/jupyter/", hostPort, sessionID)
	call := func(method, path, auth string) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
		if err != nil {
			return 0, nil, err
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, body, err
	}
	var lastErr error
	if !eventuallyWithin(ctx, jupyterTimeout, func() bool {
		code, body, err := call("GET", "api/status", "token "+token)
		lastErr = fmt.Errorf("GET api/status: %d %s %v", code, body, err)
		return err == nil && code == http.StatusOK
	}) {
		logs, _ := h.rt.Logs(h.ctx, runtime.ContainerName(spec.KernelID), runtime.LogOptions{})
		t.Fatalf("Jupyter did not answer under %s: %v\nlogs:\n%s", base, lastErr, logs)
	}

	for _, auth := range []string{"", "token " + randomHex(t, 24), "token "} {
		if code, body, err := call("GET", "api/kernels", auth); err != nil || code != http.StatusForbidden {
			t.Errorf("GET api/kernels with Authorization %q: %d %s %v; want 403", auth, code, body, err)
		}
	}
	// Nothing is served outside the base URL (the proxy forwards it as is).
	outside, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://127.0.0.1:%d/api/status", hostPort), nil)
	if err != nil {
		t.Fatal(err)
	}
	outside.Header.Set("Authorization", "token "+token)
	if resp, err := http.DefaultClient.Do(outside); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/status: %+v %v; want 404", resp, err)
	} else {
		resp.Body.Close()
	}

	code, body, err := call("POST", "api/kernels", "token "+token)
	if err != nil || code != http.StatusCreated {
		t.Fatalf("POST api/kernels: %d %s %v", code, body, err)
	}
	var kernel struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &kernel); err != nil || kernel.ID == "" {
		t.Fatalf("kernel %s: %v", body, err)
	}

	if got := runOnKernel(t, ctx, strings.Replace(base, "http", "ws", 1)+"api/kernels/"+kernel.ID+"/channels", token, "print(6*7)"); got != "42\n" {
		t.Fatalf("print(6*7) printed %q", got)
	}
}

// Without a token the image starts no Jupyter (never an open notebook)
// and the session stays up; the session's command runs, without the
// token in its environment.
func TestPythonImageWithoutTokenOrWithCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	image := podmantest.Python(t, h.uri)
	ctx, cancel := context.WithTimeout(context.Background(), jupyterTimeout)
	defer cancel()
	h.ctx = ctx

	idle := h.spec()
	idle.Image, idle.UserNS, idle.StopGrace = image, &runtime.DefaultIDMap, 5*time.Second
	idle.Env = map[string]string{"CAIRN_SESSION_ID": idle.SessionID}
	c := h.run(idle)
	h.logsUntil(c.ID, "cairn-start: CAIRN_APP_TOKEN is not set; not starting Jupyter (it never runs without a token)")
	if got, err := h.rt.Inspect(h.ctx, c.ID); err != nil || got.State != runtime.StateRunning {
		t.Fatalf("without a token the session must stay up: %+v %v", got, err)
	}

	cmd := h.spec("python3", "-c", "import os, numpy; print(int(numpy.int64(6) * 7), 'CAIRN_APP_TOKEN' in os.environ)")
	cmd.Image, cmd.UserNS, cmd.StopGrace = image, &runtime.DefaultIDMap, 5*time.Second
	cmd.Env = map[string]string{"CAIRN_APP_TOKEN": randomHex(t, 24), "CAIRN_SESSION_ID": cmd.SessionID}
	c = h.run(cmd)
	h.logsUntil(c.ID, "42 False")
}

// runOnKernel executes code on a Jupyter kernel through its channels
// WebSocket, with the token, and returns what it printed on stdout.
func runOnKernel(t *testing.T, ctx context.Context, url, token, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, jupyterTimeout)
	defer cancel()
	out, err := apptest.JupyterExecute(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"token " + token}}}, code)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runPublished creates and starts a kernel of spec as Ensure does, with
// containerPort published on a loopback port that Podman picks, and
// returns that port. (The runtime's spec has no ports yet: the agent's
// publishing adds them.)
func (h *harness) runPublished(spec runtime.ContainerSpec, containerPort uint16) uint16 {
	h.t.Helper()
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		h.t.Fatal(err)
	}
	g := specFor(spec)
	g.PortMappings = []nettypes.PortMapping{{HostIP: "127.0.0.1", ContainerPort: containerPort, Protocol: "tcp"}}
	resp, err := containers.CreateWithSpec(h.rt.call(h.ctx), g, nil)
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	if err := h.rt.Start(h.ctx, resp.ID); err != nil {
		h.t.Fatalf("start: %v", err)
	}
	data, err := containers.Inspect(h.rt.call(h.ctx), resp.ID, nil)
	if err != nil {
		h.t.Fatalf("inspect: %v", err)
	}
	bound := data.NetworkSettings.Ports[fmt.Sprintf("%d/tcp", containerPort)]
	if len(bound) != 1 || bound[0].HostIP != "127.0.0.1" {
		h.t.Fatalf("port %d is published as %+v, want one binding on 127.0.0.1", containerPort, bound)
	}
	var port uint16
	if _, err := fmt.Sscan(bound[0].HostPort, &port); err != nil || port == 0 {
		h.t.Fatalf("host port %q: %v", bound[0].HostPort, err)
	}
	return port
}

// eventuallyWithin is eventually with its own bound.
func eventuallyWithin(ctx context.Context, d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
