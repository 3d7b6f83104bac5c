package agentlogs

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/bustest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// localFunc is an in-process agent answering with a function.
type localFunc func(ctx context.Context, kernelID uuid.UUID, opts runtime.LogOptions) ([]byte, error)

func (f localFunc) Logs(ctx context.Context, kernelID uuid.UUID, opts runtime.LogOptions) ([]byte, error) {
	return f(ctx, kernelID, opts)
}

func (f localFunc) StreamLogs(context.Context, uuid.UUID, runtime.LogRange, io.Writer) (runtime.LogRead, error) {
	return runtime.LogRead{}, domain.Errorf("test", domain.KindInternal, "not streamed here")
}

// staticAddresses is an address book with fixed entries.
type staticAddresses map[string]string

func (s staticAddresses) Address(id string) (string, bool) { a, ok := s[id]; return a, ok }

func TestKernelLogsRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := NewSource(nil, nil, nil, nil)
	for _, tc := range []struct {
		name            string
		agent, kernel   string
		tail            int
		kind            domain.Kind
		messageContains string
	}{
		{"kernel id", "a", "not-a-uuid", 0, domain.KindInvalid, "kernel id"},
		{"tail", "a", uuid.NewString(), -1, domain.KindInvalid, "negative"},
		{"no agent", "", uuid.NewString(), 0, domain.KindUnavailable, "not placed"},
		{"no address", "remote-1", uuid.NewString(), 0, domain.KindUnavailable, "--listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := s.KernelLogs(context.Background(), tc.agent, tc.kernel, tc.tail)
			if domain.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.messageContains) {
				t.Errorf("KernelLogs: %v (kind %v), want %v mentioning %q", err, domain.KindOf(err), tc.kind, tc.messageContains)
			}
		})
	}
}

func TestKernelLogsAsksTheLocalAgent(t *testing.T) {
	t.Parallel()
	kernel := uuid.New()
	var got runtime.LogOptions
	local := localFunc(func(_ context.Context, id uuid.UUID, opts runtime.LogOptions) ([]byte, error) {
		if id != kernel {
			t.Errorf("asked for kernel %s, want %s", id, kernel)
		}
		got = opts
		return []byte("hello\n"), nil
	})
	s := NewSource(map[string]LocalAgent{"local": local}, staticAddresses{"local": "http://unused.invalid"}, nil, nil)
	logs, err := s.KernelLogs(context.Background(), "local", kernel.String(), 5)
	if err != nil || string(logs) != "hello\n" {
		t.Fatalf("KernelLogs = %q, %v", logs, err)
	}
	if got.Tail != 5 {
		t.Errorf("tail passed as %d, want 5", got.Tail)
	}
}

// TestKernelLogsFromARemoteAgent asks the real agent endpoint
// (node.Agent.Handler) of an agent that is not running: it answers 503,
// which must come back as KindUnavailable with the agent's explanation.
func TestKernelLogsFromARemoteAgent(t *testing.T) {
	t.Parallel()
	bussrv := bustest.Start(t, quiet)
	creds, _ := bussrv.AgentCredentials(t, "remote-1")
	a, err := node.New(node.Config{AgentID: "remote-1", BusURL: "nats://127.0.0.1:1", BusCredentialsFile: creds, DataDir: t.TempDir()}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	// Unsigned, or signed by another installation: refused.
	for _, sign := range []Signer{nil, func(req *http.Request, agentID string) error {
		other, err := busauth.LoadOrCreateKeys(filepath.Join(t.TempDir(), "other"))
		if err != nil {
			return err
		}
		return other.SignAgentRequest(req, agentID, time.Now())
	}} {
		_, err := NewSource(nil, staticAddresses{"remote-1": srv.URL}, nil, sign).KernelLogs(context.Background(), "remote-1", uuid.NewString(), 1)
		if domain.KindOf(err) != domain.KindUnavailable || !strings.Contains(err.Error(), "401") {
			t.Errorf("KernelLogs without the manager's signature = %v, want the agent's 401", err)
		}
	}

	s := NewSource(nil, staticAddresses{"remote-1": srv.URL + "/"}, nil, func(req *http.Request, agentID string) error {
		return bussrv.Keys.SignAgentRequest(req, agentID, time.Now())
	})
	_, err = s.KernelLogs(context.Background(), "remote-1", uuid.NewString(), 10)
	if domain.KindOf(err) != domain.KindUnavailable || !strings.Contains(err.Error(), "not running") {
		t.Errorf("KernelLogs = %v (kind %v), want unavailable saying the agent is not running", err, domain.KindOf(err))
	}

	// An agent that does not answer at all.
	srv.Close()
	_, err = s.KernelLogs(context.Background(), "remote-1", uuid.NewString(), 0)
	if domain.KindOf(err) != domain.KindUnavailable || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("KernelLogs from a closed endpoint = %v, want unavailable", err)
	}
}

func TestKernelLogsPassesTheTail(t *testing.T) {
	t.Parallel()
	kernel := uuid.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/kernels/"+kernel.String()+"/logs" || r.URL.Query().Get("tail") != "7" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte("last lines\n"))
	}))
	defer srv.Close()
	s := NewSource(nil, staticAddresses{"remote-2": srv.URL}, &http.Client{Timeout: 5 * time.Second}, nil)
	logs, err := s.KernelLogs(context.Background(), "remote-2", kernel.String(), 7)
	if err != nil || string(logs) != "last lines\n" {
		t.Fatalf("KernelLogs = %q, %v", logs, err)
	}
}

func TestRemoteErrorKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		kind   domain.Kind
		detail string
	}{
		{http.StatusBadRequest, `{"detail":"tail: bad","field":"tail"}`, domain.KindInvalid, "tail: bad"},
		{http.StatusNotFound, `{"detail":"agent a has no logs of kernel k"}`, domain.KindNotFound, "no logs of kernel"},
		{http.StatusServiceUnavailable, `{"detail":"podman down"}`, domain.KindUnavailable, "podman down"},
		{http.StatusInternalServerError, `not json`, domain.KindUnavailable, "Internal Server Error"},
		{http.StatusBadGateway, ``, domain.KindUnavailable, "Bad Gateway"},
	} {
		err := remoteError("a", tc.status, []byte(tc.body))
		if domain.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("status %d: %v (kind %v), want %v with %q", tc.status, err, domain.KindOf(err), tc.kind, tc.detail)
		}
	}
}
