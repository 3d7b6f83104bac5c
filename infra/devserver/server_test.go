package devserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/readmodels"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a Run in the background.
type running struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
	out    *syncBuffer
	creds  bootstrap.Credentials
	// endpoints are what OnReady said.
	endpoints Endpoints
}

// testConfig is a server without a local agent (no Podman needed), on free
// ports, in dir.
func testConfig(dir string) Config {
	return Config{Listen: "127.0.0.1:0", NATSListen: "127.0.0.1:0", DataDir: dir, NoAgent: true, ShutdownTimeout: 20 * time.Second}
}

// start runs cfg until the test ends, and waits until it serves.
func start(t *testing.T, cfg Config) *running {
	t.Helper()
	r := &running{done: make(chan error, 1), logs: &syncBuffer{}, out: &syncBuffer{}}
	cfg.Logger = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Out = r.out
	ready := make(chan Endpoints, 1)
	cfg.OnReady = func(e Endpoints) { ready <- e }
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			t.Logf("logs:\n%s", r.logs.String())
		}
	})
	var up Endpoints
	select {
	case up = <-ready:
	case err := <-r.done:
		r.done <- err
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("not up after a minute")
	}
	creds, err := bootstrap.Load(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if creds.APIURL != up.APIURL || creds.Token != up.Token || !strings.HasPrefix(up.BusURL, "nats://") {
		t.Fatalf("OnReady got %+v; credentials.json holds %s %s", up, creds.APIURL, creds.Token)
	}
	r.creds, r.endpoints = creds, up
	return r
}

// stop cancels Run and checks that it returned nil in time.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run returned %v after a clean stop", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Run did not return a minute after its context ended")
		}
	})
}

func (r *running) get(t *testing.T, path string, auth bool) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", r.creds.APIURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestRunServesAndStopsInOrder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	r := start(t, testConfig(dir))

	if code, body := r.get(t, "/healthz", false); code != http.StatusOK || !bytes.Contains(body, []byte(`"status":"ok"`)) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := r.get(t, "/metrics", false); code != http.StatusOK || !bytes.Contains(body, []byte("cairn_projection_position")) {
		t.Errorf("/metrics: %d, no projector metrics", code)
	}
	if code, _ := r.get(t, "/v1/sessions", false); code != http.StatusUnauthorized {
		t.Errorf("/v1/sessions without the token: %d, want 401", code)
	}
	code, body := r.get(t, "/v1/sessions", true)
	if code != http.StatusOK {
		t.Errorf("/v1/sessions with the token: %d %s", code, body)
	}
	if code, body := r.get(t, "/v1/usage?format=csv", true); code != http.StatusOK || !bytes.HasPrefix(body, []byte("day,user_id,")) {
		t.Errorf("/v1/usage: %d %s", code, body)
	}
	// The explanations are wired (the queue is empty).
	if code, body := r.get(t, "/v1/scheduler/queue", true); code != http.StatusOK || !bytes.Contains(body, []byte(`"items":[]`)) {
		t.Errorf("/v1/scheduler/queue: %d %s", code, body)
	}
	if code, _ := r.get(t, "/nowhere", true); code != http.StatusNotFound {
		t.Errorf("unknown route: %d, want 404", code)
	}

	out := r.out.String()
	for _, want := range []string{r.creds.APIURL + "/ ", r.creds.APIURL, r.creds.Token, filepath.Join(dir, bootstrap.FileName), "nats://127.0.0.1:", "none (--no-agent)", "created now"} {
		if abs, err := filepath.Abs(want); err == nil && strings.HasPrefix(want, dir) {
			want = abs
		}
		if !strings.Contains(out, want) {
			t.Errorf("the banner does not show %q:\n%s", want, out)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, bootstrap.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file: %v, mode %v", err, fi.Mode().Perm())
	}

	r.stop(t)
	// The parts stop in the reverse order they started.
	re := regexp.MustCompile(`msg=stopped part="?([^"=]+?)"? took=`)
	var order []string
	for _, m := range re.FindAllStringSubmatch(r.logs.String(), -1) {
		order = append(order, m[1])
	}
	want := []string{
		// The access log's Writer starts before the reports consumer (which
		// records agents' activity through it) and the HTTP API.
		"HTTP API", "app proxy", "vfolder upload expiry", "agent address book", "reports consumer", "forwarder", "vfolder orphans", "vfolder jobs", "session limits", "audit sequencer", "scheduler", "access log",
		"projector settings", "projector usage", "projector occupancy", "projector audit-runs", "projector vfolders", "projector tenancy", "projector agents", "projector sessions", "maintenance jobs", "bus", "bus revocations", "embedded NATS",
		"vfolder storage", "read-model database", "event store",
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("stop order:\n got %q\nwant %q", order, want)
	}
}

func TestRunKeepsCredentialsAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := start(t, testConfig(dir))
	first.stop(t)
	second := start(t, testConfig(dir))
	if second.creds.Token != first.creds.Token {
		t.Error("the token changed across restarts")
	}
	if !strings.Contains(second.out.String(), "kept from an earlier start") {
		t.Errorf("the banner of a restart:\n%s", second.out.String())
	}
	if code, _ := second.get(t, "/v1/agents", true); code != http.StatusOK {
		t.Errorf("/v1/agents after a restart: %d", code)
	}
}

func TestRunFailsWhenTheAddressIsTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t.TempDir())
	cfg.Listen = ln.Addr().String()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "HTTP API") {
		t.Fatalf("Run = %v, want an HTTP API error", err)
	}
}

func TestRunStopsWhenTheLocalAgentCannotStart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.NoAgent = false
	cfg.Podman = "unix://" + filepath.Join(t.TempDir(), "no-podman.sock")
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, cfg)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (context: %v), want the agent's failure", err, ctx.Err())
	}
	for _, want := range []string{"local agent", "--no-agent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRunRefusesABadConfig(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), Config{Listen: "nope", DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Run = %v, want the listen address refused", err)
	}
}

// TestHealthzJSON checks the health document's fields.
func TestHealthzJSON(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(t.TempDir()))
	code, body := r.get(t, "/healthz", false)
	var h struct {
		Status     string            `json:"status"`
		Bus        string            `json:"bus"`
		ReadModels map[string]uint64 `json:"read_models"`
	}
	if err := json.Unmarshal(body, &h); err != nil || code != http.StatusOK {
		t.Fatalf("/healthz: %d %s (%v)", code, body, err)
	}
	if h.Status != "ok" || !strings.HasPrefix(h.Bus, "nats://") || len(h.ReadModels) != len(readmodels.Names()) {
		t.Errorf("/healthz: %+v", h)
	}
}

// TestServeWithoutAudit: Endpoints.ServeWithoutAudit serves the same
// API, authenticated, without recording its requests; the audited API
// records every one (it is seen sealed in the audit trail).
func TestServeWithoutAudit(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(t.TempDir()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unaudited := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- r.endpoints.ServeWithoutAudit(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeWithoutAudit: %v", err)
		}
	})
	call := func(base, path, requestID string, auth bool) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+r.creds.Token)
		}
		req.Header.Set("X-Request-ID", requestID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	if code, _ := call(unaudited, "/v1/sessions", "no-token", false); code != http.StatusUnauthorized {
		t.Errorf("unaudited without the token: %d, want 401", code)
	}
	if code, body := call(unaudited, "/v1/sessions", "unaudited-1", true); code != http.StatusOK {
		t.Fatalf("unaudited with the token: %d %s", code, body)
	}
	if code, body := call(r.creds.APIURL, "/v1/sessions", "audited-1", true); code != http.StatusOK {
		t.Fatalf("audited: %d %s", code, body)
	}
	// Records are sealed in the order they were queued: once the audited
	// request's record shows, an unaudited one would have shown too.
	var body []byte
	await.Until(t, time.Minute, "the audited request in the audit trail", func() bool {
		var code int
		code, body = call(unaudited, "/v1/audit?limit=1000", "poll", true)
		if code != http.StatusOK {
			t.Fatalf("/v1/audit: %d %s", code, body)
		}
		return bytes.Contains(body, []byte(`"audited-1"`))
	})
	for _, id := range []string{"unaudited-1", "no-token", "poll"} {
		if bytes.Contains(body, []byte(`"`+id+`"`)) {
			t.Errorf("request %s on the unaudited API was recorded", id)
		}
	}
	if code, body := call(unaudited, "/metrics", "m", false); code != http.StatusOK || !bytes.Contains(body, []byte("cairn_audit_records_sealed_total")) {
		t.Errorf("/metrics: %d, without the sequencer's metrics", code)
	}
}
