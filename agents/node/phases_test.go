package node_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// A running kernel's apps are probed on their host ports: the agent
// reports the kernel running again with the apps that answered, once each
// answers (busybox httpd, started a moment after the container), and
// never an app nothing serves; a removed kernel sends no readiness after
// its removal.
func TestAppReadiness(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.runAgent(h.config())
	defer stop()
	h.register(0)

	web := h.create("sh", "-c", "sleep 1; mkdir -p /www && echo hello > /www/index.html && exec busybox httpd -f -p 8080 -h /www")
	web.ServicePorts = []domain.ServicePort{{Name: "web", Protocol: "http", Port: 8080}, {Name: "port-9000", Protocol: "preopen", Port: 9000}}
	mark := h.reports.mark()
	h.send(web)
	running := h.status(mark, web.KernelID, domain.PhaseRunning)
	if len(running.ReadyApps) != 0 {
		t.Fatalf("the first running report names ready apps %v", running.ReadyApps)
	}
	ready := h.reports.await(t, mark, "web ready", func(m protocol.Message) bool {
		s, ok := m.(protocol.KernelStatus)
		return ok && s.KernelID == web.KernelID && s.Phase == domain.PhaseRunning && len(s.ReadyApps) > 0
	}).(protocol.KernelStatus)
	if !slices.Equal(ready.ReadyApps, []string{"web"}) || ready.ContainerID != running.ContainerID || len(ready.ServicePorts) != 2 {
		t.Fatalf("readiness report %+v, want web ready in %s with both ports", ready, running.ContainerID)
	}
	// Ready means it answers on its host port.
	if status, body := fetch(t, h.ctx, "http://127.0.0.1:"+strconv.Itoa(ready.ServicePorts[0].HostPort)+"/", nil); status != http.StatusOK || string(body) != "hello\n" {
		t.Fatalf("the ready app answered %d %q", status, body)
	}

	gone := h.reports.mark()
	h.send(h.destroy(web))
	h.status(gone, web.KernelID, domain.PhaseRemoved)
	stop()
	for _, m := range h.reports.all()[gone:] {
		if s, ok := m.(protocol.KernelStatus); ok && s.KernelID == web.KernelID && slices.Contains(s.ReadyApps, "port-9000") {
			t.Errorf("port-9000, which nothing serves, was reported ready: %+v", s)
		}
	}
	phases := h.phases(web.KernelID)
	if phases[len(phases)-1] != domain.PhaseRemoved {
		t.Errorf("phases %v: a report came after the kernel was removed", phases)
	}
}

// A kernel whose image is not on the node is pulled (from a registry the
// test serves: podmantest.RegistryImage), and the agent reports the pull's
// progress while pulling, throttled: the bytes of the layer that arrives,
// then the kernel runs.
func TestPullProgressIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ref := podmantest.RegistryImage(t, h.uri)
	_, stop := h.runAgent(h.config())
	defer stop()
	h.register(0)

	k := h.create("sleep", "60")
	k.Image = ref
	mark := h.reports.mark()
	h.send(k)
	h.status(mark, k.KernelID, domain.PhaseRunning)
	var progress []domain.PullProgress
	for _, m := range h.reports.all()[mark:] {
		if s, ok := m.(protocol.KernelStatus); ok && s.KernelID == k.KernelID && s.Pull != nil {
			if s.Phase != domain.PhasePulling {
				t.Errorf("progress in a %s report", s.Phase)
			}
			progress = append(progress, *s.Pull)
		}
	}
	t.Logf("pull progress reported: %+v", progress)
	if !slices.ContainsFunc(progress, func(p domain.PullProgress) bool { return p.BytesTotal >= podmantest.RegistryLayerBytes }) {
		t.Errorf("progress %+v: no report knew the new layer's size", progress)
	}
	if phases := h.phases(k.KernelID); !slices.Contains(phases, domain.PhasePulling) {
		t.Errorf("phases %v: no pulling", phases)
	}
}
