package podman

import (
	"context"
	"fmt"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

const (
	// raceWait bounds how long Ensure looks for the container of another
	// process whose create beat ours: Podman reserves the name before the
	// container becomes visible.
	raceWait = 3 * time.Second
	// racePoll is how often it looks meanwhile.
	racePoll = 50 * time.Millisecond
)

// Ensure returns the container of spec.KernelID, creating it when there is
// none. See runtime.Runtime.
func (r *Runtime) Ensure(ctx context.Context, spec runtime.ContainerSpec) (runtime.Container, bool, error) {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return runtime.Container{}, false, fmt.Errorf("podman: ensure kernel %q: %w", spec.KernelID, err)
	}
	unlock, err := r.locks.lock(ctx, "kernel/"+spec.KernelID)
	if err != nil {
		return runtime.Container{}, false, fmt.Errorf("podman: ensure kernel %s: %w", spec.KernelID, err)
	}
	defer unlock()

	if c, ok, err := r.findKernel(ctx, spec.KernelID); err != nil || ok {
		return c, false, err
	}
	present, err := r.ImageExists(ctx, spec.Image)
	if err != nil {
		return runtime.Container{}, false, err
	}
	if !present {
		return runtime.Container{}, false, fmt.Errorf("podman: ensure kernel %s: %w: image %s is not present locally", spec.KernelID, runtime.ErrNotFound, spec.Image)
	}

	resp, err := containers.CreateWithSpec(r.call(ctx), specFor(spec), nil)
	if err != nil {
		err = translate(ctx, "create "+runtime.ContainerName(spec.KernelID), err)
		if !isServiceError(err) {
			return runtime.Container{}, false, err
		}
		// The service refused. If it is because another process holds the
		// name, its container is the kernel's: return that one.
		if c, ok := r.awaitKernel(ctx, spec.KernelID); ok {
			return c, false, nil
		}
		return runtime.Container{}, false, err
	}
	c, err := r.Inspect(ctx, resp.ID)
	if err != nil {
		return runtime.Container{}, false, err
	}
	return c, true, nil
}

// findKernel returns the container labelled with kernelID, if any.
func (r *Runtime) findKernel(ctx context.Context, kernelID string) (runtime.Container, bool, error) {
	found, err := r.list(ctx, runtime.LabelKernel, kernelID)
	if err != nil || len(found) == 0 {
		return runtime.Container{}, false, err
	}
	// There is one unless someone bypassed Ensure; prefer Ensure's own.
	pick := found[0]
	for _, c := range found {
		if c.Name == runtime.ContainerName(kernelID) {
			pick = c
		}
	}
	c, err := r.Inspect(ctx, pick.ID)
	if err != nil {
		return runtime.Container{}, false, err
	}
	return c, true, nil
}

// awaitKernel looks for the kernel's container for up to raceWait, for
// when a create failed because another process's create won the name but
// its container is not listed yet.
func (r *Runtime) awaitKernel(ctx context.Context, kernelID string) (runtime.Container, bool) {
	ctx, cancel := context.WithTimeout(ctx, raceWait)
	defer cancel()
	tick := time.NewTicker(racePoll)
	defer tick.Stop()
	for {
		if c, ok, err := r.findKernel(ctx, kernelID); err == nil && ok {
			return c, true
		}
		select {
		case <-ctx.Done():
			return runtime.Container{}, false
		case <-tick.C:
		}
	}
}
