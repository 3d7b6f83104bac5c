package podman

import (
	"sync"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
)

// ensureConcurrently calls Ensure for one kernel from n goroutines, each
// through the runtime rts[i%len(rts)], and checks that exactly one call
// created the container and all got the same one.
func ensureConcurrently(t *testing.T, h *harness, rts []*Runtime, n int) {
	t.Helper()
	spec := h.spec("sleep", "30")
	type result struct {
		c       runtime.Container
		created bool
		err     error
	}
	results := make([]result, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			c, created, err := rts[i%len(rts)].Ensure(h.ctx, spec)
			results[i] = result{c, created, err}
		}()
	}
	start.Done()
	wg.Wait()

	creators := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("ensure %d: %v", i, r.err)
		}
		if r.created {
			creators++
		}
		if r.c.ID != results[0].c.ID {
			t.Errorf("ensure %d got container %s, ensure 0 got %s", i, r.c.ID, results[0].c.ID)
		}
	}
	if creators != 1 {
		t.Errorf("%d calls report creating the container, want 1", creators)
	}
	list, err := h.rt.List(h.ctx, h.agentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].KernelID != spec.KernelID {
		t.Errorf("the agent has %d containers (%+v), want 1 for kernel %s", len(list), list, spec.KernelID)
	}
}

// Concurrent Ensures for one kernel in one agent process create one
// container.
func TestEnsureConcurrentOneProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ensureConcurrently(t, h, []*Runtime{h.rt}, 8)
}

// Concurrent Ensures through separate connections (as from two agent
// processes, which share no lock) still create one container: Podman
// refuses the second name, and the losers return the winner's container.
func TestEnsureConcurrentConnections(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rts := make([]*Runtime, 8)
	for i := range rts {
		rt, err := Connect(h.ctx, h.uri)
		if err != nil {
			t.Fatal(err)
		}
		rts[i] = rt
	}
	ensureConcurrently(t, h, rts, 8)
}

// Ensure refuses a malformed spec before touching Podman.
func TestEnsureInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.spec("true")
	spec.KernelID = "no/slashes"
	spec.Labels = map[string]string{runtime.LabelAgent: "someone-else"}
	_, _, err := h.rt.Ensure(h.ctx, spec)
	wantIs(t, err, runtime.ErrInvalid)
	list, err := h.rt.List(h.ctx, h.agentID)
	if err != nil || len(list) != 0 {
		t.Errorf("list after a refused ensure = %v, %v; want none", list, err)
	}
}

// A CDI device reaches Podman: one this host has no CDI spec for makes the
// kernel fail to start (instead of running without its accelerator), and
// it stays created.
func TestUnknownDevice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.spec("true")
	spec.Devices = []string{"nvidia.com/gpu=GPU-" + randomID(t)}
	c, _, err := h.rt.Ensure(h.ctx, spec)
	if err != nil {
		t.Fatalf("ensure: %v", err)
	}
	err = h.rt.Start(h.ctx, c.ID)
	if err == nil {
		t.Fatal("a kernel with an unresolvable CDI device started")
	}
	t.Logf("start: %v", err)
	got, err := h.rt.Inspect(h.ctx, c.ID)
	if err != nil || got.State != runtime.StateCreated {
		t.Errorf("after a failed start: %+v, %v; want created", got, err)
	}
}
