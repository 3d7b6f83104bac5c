package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// testTimeout bounds every test's calls; the suite's containers are tiny.
const testTimeout = 60 * time.Second

// harness is one test's connection, base image and unique ids. Each test
// owns an agent id, so parallel tests (and parallel runs of the suite)
// never see each other's containers; cleanup removes the agent's
// containers.
type harness struct {
	t       *testing.T
	ctx     context.Context
	rt      *Runtime
	uri     string
	image   string
	agentID string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	uri := podmantest.URL(t)
	image := podmantest.Image(t, uri)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	rt, err := Connect(ctx, uri)
	if err != nil {
		t.Fatalf("connect %s: %v", uri, err)
	}
	h := &harness{t: t, ctx: ctx, rt: rt, uri: uri, image: image, agentID: "test-agent-" + randomID(t)}
	t.Cleanup(h.removeAll)
	return h
}

// spec returns a spec for a fresh kernel of this test's agent.
func (h *harness) spec(command ...string) runtime.ContainerSpec {
	return runtime.ContainerSpec{
		KernelID:  "k-" + randomID(h.t),
		SessionID: "s-" + randomID(h.t),
		AgentID:   h.agentID,
		Image:     h.image,
		Command:   command,
		StopGrace: time.Second, // busybox sh as pid 1 ignores SIGTERM
	}
}

// run ensures and starts a container for spec.
func (h *harness) run(spec runtime.ContainerSpec) runtime.Container {
	h.t.Helper()
	c, created, err := h.rt.Ensure(h.ctx, spec)
	if err != nil {
		h.t.Fatalf("ensure: %v", err)
	}
	if !created {
		h.t.Fatalf("ensure of a new kernel: created = false")
	}
	if err := h.rt.Start(h.ctx, c.ID); err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return c
}

// logsUntil polls the container's logs until they contain want.
func (h *harness) logsUntil(id, want string) string {
	h.t.Helper()
	var logs []byte
	ok := eventually(h.ctx, func() bool {
		var err error
		logs, err = h.rt.Logs(h.ctx, id, runtime.LogOptions{})
		if err != nil {
			h.t.Fatalf("logs: %v", err)
		}
		return containsLine(string(logs), want)
	})
	if !ok {
		h.t.Fatalf("logs never contained %q; got %q", want, logs)
	}
	return string(logs)
}

// removeAll removes every container of the test's agent.
func (h *harness) removeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := h.rt.List(ctx, h.agentID)
	if err != nil {
		h.t.Logf("cleanup: list: %v", err)
		return
	}
	for _, c := range cs {
		if err := h.rt.Remove(ctx, c.ID); err != nil {
			h.t.Logf("cleanup: remove %s: %v", c.Name, err)
		}
	}
}

// eventually polls cond until it holds or ctx ends (at most 20 s): for
// conditions the runtime offers no event for, such as output appearing
// in a log.
func eventually(ctx context.Context, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
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

func randomID(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func containsLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one matching %v", err, target)
	}
}
