package node_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// A real Jupyter (the python image's) with a notebook kernel started in
// it is a notebook signal: the agent asks its REST API with the kernel's
// app token and reports kernel.activity (notebook).
func TestAgentReportsARealNotebooksActivity(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Waits for a background build of the image; fails under CI=true
	// without it.
	pythonImage := podmantest.Python(t, h.uri)
	cfg := h.config()
	cfg.ActivityInterval = 200 * time.Millisecond
	h.runAgent(cfg)
	c := h.create() // no command: the image's entrypoint starts Jupyter and waits
	c.Image = pythonImage
	c.Slots = domain.Slots{domain.SlotCPU: 1000, domain.SlotMem: domain.Units(1 << 30)}
	c.ServicePorts = []domain.ServicePort{{Name: "jupyter", Protocol: domain.ServiceProtocolHTTP, Port: 8888}}
	mark := h.reports.mark()
	h.send(c)
	running := h.status(mark, c.KernelID, domain.PhaseRunning)
	if len(running.ServicePorts) != 1 {
		t.Fatalf("service ports %+v", running.ServicePorts)
	}
	token := envOf(h.inspect(running.ContainerID))[node.EnvAppToken]
	base := fmt.Sprintf("http://127.0.0.1:%d/v1/sessions/%s/apps/jupyter/", running.ServicePorts[0].HostPort, c.SessionID)

	// Start a notebook kernel, as a user opening a notebook does.
	started := time.Now()
	h.eventually("Jupyter to start a notebook kernel", func() bool {
		req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, base+"api/kernels", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "token "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusCreated
	})
	t.Logf("Jupyter answered after %s", time.Since(started))
	got := h.reports.await(t, mark, "of notebook activity", func(m protocol.Message) bool {
		a, ok := m.(protocol.KernelActivity)
		return ok && a.KernelID == c.KernelID && slices.Contains(a.Signals, protocol.SignalNotebook)
	}).(protocol.KernelActivity)
	if got.SessionID != c.SessionID {
		t.Fatalf("activity %+v", got)
	}
}
