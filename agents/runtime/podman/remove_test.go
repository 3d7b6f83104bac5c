package podman

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
)

// Remove stops and removes a running kernel, and is a no-op the second
// time.
func TestRemove(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec("sleep", "30"))

	began := time.Now()
	if err := h.rt.Remove(h.ctx, c.ID); err != nil {
		t.Fatalf("remove: %v", err)
	}
	t.Logf("removing a running kernel with a 1 s grace took %s", time.Since(began).Round(time.Millisecond))

	_, err := h.rt.Inspect(h.ctx, c.ID)
	wantIs(t, err, runtime.ErrNotFound)
	list, err := h.rt.List(h.ctx, h.agentID)
	if err != nil || len(list) != 0 {
		t.Errorf("list after remove = %v, %v; want none", list, err)
	}
	if err := h.rt.Remove(h.ctx, c.ID); err != nil {
		t.Errorf("second remove: %v", err)
	}
	if err := h.rt.Remove(h.ctx, c.Name); err != nil {
		t.Errorf("remove by name of a removed container: %v", err)
	}
}

// Wait gives up when its context ends, leaving the kernel running.
func TestWaitContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec("sleep", "30"))

	ctx, cancel := context.WithTimeout(h.ctx, 300*time.Millisecond)
	defer cancel()
	_, err := h.rt.Wait(ctx, c.ID)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past its deadline: %v, want DeadlineExceeded", err)
	}
	got, err := h.rt.Inspect(h.ctx, c.ID)
	if err != nil || got.State != runtime.StateRunning {
		t.Errorf("after an abandoned wait: %+v, %v; want running", got, err)
	}

	// A container that was never started has not exited either.
	created, _, err := h.rt.Ensure(h.ctx, h.spec("true"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(h.ctx, 300*time.Millisecond)
	defer cancel()
	if code, err := h.rt.Wait(ctx, created.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait on a created container = %d, %v; want DeadlineExceeded", code, err)
	}
}

// Wait on a created container returns the exit code once it is started
// and exits.
func TestWaitBeforeStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, _, err := h.rt.Ensure(h.ctx, h.spec("sh", "-c", "exit 7"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		err  error
	}
	waited := make(chan result, 1)
	go func() {
		code, err := h.rt.Wait(h.ctx, c.ID)
		waited <- result{code, err}
	}()
	if err := h.rt.Start(h.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if r := <-waited; r.err != nil || r.code != 7 {
		t.Errorf("wait = %d, %v; want 7", r.code, r.err)
	}
}
