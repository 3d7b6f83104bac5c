package podman

import (
	"context"
	"errors"
	"fmt"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/cairnhq/cairn/agents/runtime"
)

// ImageExists reports whether ref is present locally.
func (r *Runtime) ImageExists(ctx context.Context, ref string) (bool, error) {
	if ref == "" {
		return false, fmt.Errorf("podman: image exists: %w: empty image reference", runtime.ErrInvalid)
	}
	ok, err := images.Exists(r.call(ctx), ref, nil)
	if err != nil {
		return false, translate(ctx, "image exists "+ref, err)
	}
	return ok, nil
}

// EnsureImage makes ref present locally, pulling it from its registry when
// it is not. A pull that fails while the service is reachable is
// runtime.ErrNotFound, with the registry's reason in the chain.
func (r *Runtime) EnsureImage(ctx context.Context, ref string) error {
	ok, err := r.ImageExists(ctx, ref)
	if err != nil || ok {
		return err
	}
	_, err = images.Pull(r.call(ctx), ref, &images.PullOptions{Quiet: ptr(true)})
	if err == nil {
		return nil
	}
	terr := translate(ctx, "pull "+ref, err)
	if ctx.Err() != nil || errors.Is(terr, runtime.ErrUnavailable) || errors.Is(terr, runtime.ErrInvalid) || errors.Is(terr, runtime.ErrNotFound) {
		return terr
	}
	// The pull's errors are streamed in its body, without a status; the
	// service is up, so the image cannot be had.
	return fmt.Errorf("podman: pull %s: %w: %w", ref, runtime.ErrNotFound, err)
}
