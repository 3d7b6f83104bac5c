package podman

import (
	"context"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/specgen"

	"github.com/cairnhq/cairn/agents/runtime"
)

// An image that is neither local nor pullable is ErrNotFound, from Ensure
// and from EnsureImage; the base image is present.
func TestUnknownImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	missing := "localhost/cairn/missing-" + randomID(t) + ":latest"

	ok, err := h.rt.ImageExists(h.ctx, missing)
	if err != nil || ok {
		t.Errorf("image exists %s = %v, %v; want false", missing, ok, err)
	}
	spec := h.spec("true")
	spec.Image = missing
	_, _, err = h.rt.Ensure(h.ctx, spec)
	wantIs(t, err, runtime.ErrNotFound)
	// The pull goes to the image's registry (localhost: nothing listens).
	var moved []runtime.PullProgress
	err = h.rt.EnsureImage(h.ctx, missing, func(p runtime.PullProgress) { moved = append(moved, p) })
	wantIs(t, err, runtime.ErrNotFound)
	if len(moved) != 0 {
		t.Errorf("a pull that found nothing reported progress %v", moved)
	}
	t.Logf("pull of a missing image: %v", err)

	if err := h.rt.EnsureImage(h.ctx, h.image, nil); err != nil {
		t.Errorf("ensure image %s: %v", h.image, err)
	}
}

// Ids that name nothing are ErrNotFound, except for Remove, which has
// nothing to do.
func TestUnknownContainer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := "cairn-missing-" + randomID(t)
	_, err := h.rt.Inspect(h.ctx, id)
	wantIs(t, err, runtime.ErrNotFound)
	wantIs(t, h.rt.Start(h.ctx, id), runtime.ErrNotFound)
	_, err = h.rt.Wait(h.ctx, id)
	wantIs(t, err, runtime.ErrNotFound)
	_, err = h.rt.Logs(h.ctx, id, runtime.LogOptions{})
	wantIs(t, err, runtime.ErrNotFound)
	if err := h.rt.Remove(h.ctx, id); err != nil {
		t.Errorf("remove of a missing container: %v", err)
	}
}

// A container Cairn did not create is invisible through the port, and
// Remove leaves it alone.
func TestForeignContainer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := specgen.NewSpecGenerator(h.image, false)
	g.Name = "foreign-" + randomID(t)
	g.Command = []string{"true"}
	g.Labels = map[string]string{runtime.LabelAgent: h.agentID} // but not managed
	resp, err := containers.CreateWithSpec(h.rt.call(h.ctx), g, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := containers.Remove(h.rt.call(ctx), resp.ID, &containers.RemoveOptions{Force: ptr(true)}); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})

	_, err = h.rt.Inspect(h.ctx, resp.ID)
	wantIs(t, err, runtime.ErrNotFound)
	if list, err := h.rt.List(h.ctx, h.agentID); err != nil || len(list) != 0 {
		t.Errorf("list = %v, %v; want no container", list, err)
	}
	if err := h.rt.Remove(h.ctx, resp.ID); err != nil {
		t.Errorf("remove: %v", err)
	}
	if ok, err := containers.Exists(h.rt.call(h.ctx), resp.ID, nil); err != nil || !ok {
		t.Errorf("the foreign container is gone (%v, %v)", ok, err)
	}
}

// A service that is not there is ErrUnavailable.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Connect(ctx, "unix://"+t.TempDir()+"/no.sock")
	wantIs(t, err, runtime.ErrUnavailable)
	_, err = Connect(ctx, "http://example.com")
	wantIs(t, err, runtime.ErrInvalid)
}
