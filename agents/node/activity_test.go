package node

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	nvmllib "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/agents/protocol"
)

// fakeJupyter is a double of Jupyter's REST API (GET {base}api/kernels
// with "Authorization: token ..."), answering the kernels the test sets.
type fakeJupyter struct {
	token string
	mu    sync.Mutex
	list  []NotebookKernel
	asked int
}

func (f *fakeJupyter) set(list ...NotebookKernel) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = list
}

func (f *fakeJupyter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/sessions/s/apps/jupyter/api/kernels" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "token "+f.token || r.URL.RawQuery != "" {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	w.Header().Set("Content-Type", "application/json")
	type wire struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		LastActivity   string `json:"last_activity"`
		ExecutionState string `json:"execution_state"`
		Connections    int    `json:"connections"`
	}
	out := []wire{}
	for _, k := range f.list {
		out = append(out, wire{ID: k.ID, Name: "python3", LastActivity: k.LastActivity.Format("2006-01-02T15:04:05.000000Z"), ExecutionState: k.ExecutionState})
	}
	_ = json.NewEncoder(w).Encode(out)
}

// mockGPUs samples a go-nvml mock DGX H100 (a double of the GPUs, as no
// GPU is here) whose utilisation the test sets per device.
type mockGPUs struct {
	srv *server.Server
	mu  sync.Mutex
	pct map[string]uint32
}

func newMockGPUs(t *testing.T) *mockGPUs {
	m := &mockGPUs{srv: dgxh100.New(), pct: map[string]uint32{}}
	for _, h := range m.srv.Devices {
		d := h.(*server.Device)
		d.GetUtilizationRatesFunc = func() (nvmllib.Utilization, nvmllib.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			return nvmllib.Utilization{Gpu: m.pct[d.UUID]}, nvmllib.SUCCESS
		}
	}
	if ret := m.srv.Init(); ret != nvmllib.SUCCESS {
		t.Fatal(ret)
	}
	return m
}

func (m *mockGPUs) uuid(i int) string { return m.srv.Devices[i].(*server.Device).UUID }

func (m *mockGPUs) set(i int, pct uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pct[m.uuid(i)] = pct
}

// Utilization reads every device through NVML's interface, as
// nvml.Library.Utilization does.
func (m *mockGPUs) Utilization() ([]accelerator.Utilization, error) {
	n, _ := m.srv.DeviceGetCount()
	var out []accelerator.Utilization
	for i := range n {
		d, _ := m.srv.DeviceGetHandleByIndex(i)
		id, _ := d.GetUUID()
		u, _ := d.GetUtilizationRates()
		out = append(out, accelerator.Utilization{DeviceID: id, GPUPercent: u.Gpu})
	}
	return out, nil
}

// Each signal alone counts: a notebook kernel busy or active since the
// last look, a terminal active since the last look, GPUs whose mean over
// the window reaches the threshold. Nothing new is no signal.
func TestActivityProbeSignals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	jup := &fakeJupyter{token: "app-token"}
	srv := httptest.NewServer(jup)
	t.Cleanup(srv.Close)
	gpus := newMockGPUs(t)
	probe := newActivityProbe(jupyterAPI{client: srv.Client()}, gpus, 5*time.Minute, 10, time.Second)

	k := uuid.New()
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	w := watched{kernel: k, session: uuid.New(), notebook: &NotebookApp{URL: srv.URL + "/v1/sessions/s/apps/jupyter/", Token: "app-token"},
		gpus: []string{gpus.uuid(0), gpus.uuid(1)}}
	look := func(now time.Time, w watched) []string {
		t.Helper()
		got, errs := probe.look(ctx, now, []watched{w})
		for _, err := range errs {
			t.Errorf("look: %v", err)
		}
		return got[k]
	}
	want := func(step string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: signals %v, want %v", step, got, want)
		}
	}

	jup.set(NotebookKernel{ID: "k1", ExecutionState: "idle", LastActivity: t0.Add(-time.Hour)})
	want("first look: the notebook kernel's activity is news", look(t0, w), protocol.SignalNotebook)
	want("nothing since", look(t0.Add(30*time.Second), w))

	jup.set(NotebookKernel{ID: "k1", ExecutionState: "busy", LastActivity: t0.Add(-time.Hour)})
	want("a long computation, browser closed", look(t0.Add(time.Minute), w), protocol.SignalNotebook)
	jup.set(NotebookKernel{ID: "k1", ExecutionState: "idle", LastActivity: t0.Add(61 * time.Second)})
	want("a cell ran between two looks", look(t0.Add(90*time.Second), w), protocol.SignalNotebook)
	want("idle again", look(t0.Add(2*time.Minute), w))

	w.terminal = t0.Add(2*time.Minute + time.Second)
	want("terminal output", look(t0.Add(150*time.Second), w), protocol.SignalTerminal)
	want("the same terminal activity again is no news", look(t0.Add(3*time.Minute), w))

	// GPUs, on a kernel of their own: the mean of its GPUs' utilisation,
	// averaged over the samples of the last 5 minutes, against 10%.
	g := watched{kernel: uuid.New(), gpus: []string{gpus.uuid(0), gpus.uuid(1)}}
	lookGPU := func(at time.Duration, pct0, pct1 uint32) []string {
		t.Helper()
		gpus.set(0, pct0)
		gpus.set(1, pct1)
		got, errs := probe.look(ctx, t0.Add(at), []watched{g})
		if len(errs) > 0 {
			t.Errorf("look: %v", errs)
		}
		return got[g.kernel]
	}
	want("one GPU at 30%, one idle: 15%", lookGPU(0, 30, 0), protocol.SignalGPU)
	want("(15+0)/2", lookGPU(time.Minute, 0, 0))
	want("(15+0+20)/3", lookGPU(2*time.Minute, 20, 20), protocol.SignalGPU)
	want("the first two samples left the window: (20+0)/2, at the threshold", lookGPU(6*time.Minute+time.Second, 0, 0), protocol.SignalGPU)
	want("(20+0+0)/3", lookGPU(7*time.Minute+time.Second, 0, 0))
	want("a GPU the kernel does not hold is not its use", lookGPU(8*time.Minute, 0, 0))
	gpus.set(2, 100)
	want("still", lookGPU(9*time.Minute, 0, 0))

	w.terminal = t0.Add(9 * time.Minute)
	gpus.set(0, 100)
	gpus.set(1, 100)
	jup.set(NotebookKernel{ID: "k1", ExecutionState: "busy", LastActivity: t0.Add(9 * time.Minute)})
	want("every signal at once, sorted", look(t0.Add(9*time.Minute+30*time.Second), w), protocol.SignalGPU, protocol.SignalNotebook, protocol.SignalTerminal)

	// A kernel no longer watched is forgotten.
	if _, errs := probe.look(ctx, t0.Add(10*time.Minute), nil); len(errs) > 0 || len(probe.seen) != 0 {
		t.Errorf("after the kernel went: errs %v, %d kernels remembered", errs, len(probe.seen))
	}
}

// A notebook server that refuses the token, or does not answer, gives no
// signal and an error for the logs.
func TestActivityProbeNotebookErrors(t *testing.T) {
	t.Parallel()
	jup := &fakeJupyter{token: "right"}
	srv := httptest.NewServer(jup)
	t.Cleanup(srv.Close)
	probe := newActivityProbe(jupyterAPI{client: srv.Client()}, nil, time.Minute, 10, time.Second)
	jup.set(NotebookKernel{ID: "k1", ExecutionState: "busy"})
	k := uuid.New()
	for _, app := range []NotebookApp{
		{URL: srv.URL + "/v1/sessions/s/apps/jupyter/", Token: "wrong"},
		{URL: "http://127.0.0.1:1/v1/sessions/s/apps/jupyter/", Token: "right"},
	} {
		got, errs := probe.look(context.Background(), time.Now(), []watched{{kernel: k, notebook: &app}})
		if len(got) != 0 || len(errs) != 1 {
			t.Errorf("%s: signals %v, errors %v; want none and one error", app.URL, got, errs)
		}
	}
}
