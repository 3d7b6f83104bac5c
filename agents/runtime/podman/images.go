package podman

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
// it is not, and calls progress (if not nil) as the pull moves (see pull).
// A pull that fails while the service is reachable is
// runtime.ErrNotFound, with the registry's reason in the chain.
func (r *Runtime) EnsureImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	ok, err := r.ImageExists(ctx, ref)
	if err != nil || ok {
		return err
	}
	return r.pull(ctx, ref, progress)
}

// LocalImage is an image in the service's store under one of its names:
// the name (registry/name:tag), the architecture Podman reports (amd64,
// arm64...) and the image's labels.
type LocalImage struct {
	Reference    string
	Architecture string
	Labels       map[string]string
}

// LocalImages lists the images in the store named with prefix (e.g.
// "localhost/cairn/"), one entry per matching name, sorted by name. It
// reads the store only: nothing is pulled.
func (r *Runtime) LocalImages(ctx context.Context, prefix string) ([]LocalImage, error) {
	list, err := images.List(r.call(ctx), nil)
	if err != nil {
		return nil, translate(ctx, "list images", err)
	}
	var out []LocalImage
	for _, s := range list {
		for _, name := range s.RepoTags {
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			// The summary's architecture is a Podman 5 extension: ask
			// the image itself.
			data, err := images.GetImage(r.call(ctx), s.ID, nil)
			if err != nil {
				return nil, translate(ctx, "inspect image "+name, err)
			}
			out = append(out, LocalImage{Reference: name, Architecture: data.Architecture, Labels: maps.Clone(data.Labels)})
		}
	}
	slices.SortFunc(out, func(a, b LocalImage) int { return strings.Compare(a.Reference, b.Reference) })
	return out, nil
}
