package podman

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// startPoll is how often Wait looks whether a created container has been
// started.
const startPoll = 100 * time.Millisecond

// Start starts a container that was created and never started; one that
// runs or already ran is left alone. Podman's own start would re-run an
// exited container, so the state is checked under a per-container lock.
func (r *Runtime) Start(ctx context.Context, id string) error {
	c, err := r.Inspect(ctx, id)
	if err != nil {
		return err
	}
	unlock, err := r.locks.lock(ctx, "container/"+c.ID)
	if err != nil {
		return fmt.Errorf("podman: start %s: %w", id, err)
	}
	defer unlock()
	if c, err = r.Inspect(ctx, c.ID); err != nil {
		return err
	}
	if c.State != runtime.StateCreated {
		return nil
	}
	// An already running container is answered with 304, which the
	// bindings treat as success.
	return translate(ctx, "start "+id, containers.Start(r.call(ctx), c.ID, nil))
}

// Wait blocks until the container has exited and returns its exit code.
//
// Podman's wait answers 0 at once for a container that never started, so
// a created container is first watched (every startPoll) until it has been
// started; from then on Podman's wait is right even if the kernel exits
// between two looks, because the exit code is recorded.
func (r *Runtime) Wait(ctx context.Context, id string) (int, error) {
	c, err := r.Inspect(ctx, id)
	if err != nil {
		return 0, err
	}
	if c.State == runtime.StateCreated {
		tick := time.NewTicker(startPoll)
		defer tick.Stop()
		for c.State == runtime.StateCreated {
			select {
			case <-ctx.Done():
				return 0, fmt.Errorf("podman: wait %s: %w", id, ctx.Err())
			case <-tick.C:
			}
			if c, err = r.Inspect(ctx, c.ID); err != nil {
				return 0, err
			}
		}
	}
	code, err := containers.Wait(r.call(ctx), c.ID, nil)
	if err != nil {
		return 0, translate(ctx, "wait "+id, err)
	}
	return int(code), nil
}

// Remove stops the container, giving it the stop grace period of its spec,
// and removes it with its logs. A missing container is not an error.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	c, err := r.Inspect(ctx, id)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	// Force stops a running container first, with the stop timeout it was
	// created with (runtime.ContainerSpec.StopGrace).
	_, err = containers.Remove(r.call(ctx), c.ID, &containers.RemoveOptions{Force: ptr(true), Volumes: ptr(true)})
	err = translate(ctx, "remove "+id, err)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	return err
}
