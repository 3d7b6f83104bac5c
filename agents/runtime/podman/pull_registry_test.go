package podman

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// A real pull, from a registry served by the test (podmantest.RegistryImage:
// the base image plus a layer of random bytes, sent at a slow link's
// pace). The progress reports announce the layers before they are all
// done, count the new layer's bytes as they arrive, never go back, and
// end with every layer done; the image is then present.
func TestPullReportsProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ref := podmantest.RegistryImage(t, h.uri)

	var got []runtime.PullProgress
	if err := h.rt.EnsureImage(h.ctx, ref, func(p runtime.PullProgress) { got = append(got, p) }); err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	t.Logf("progress of the pull: %+v", got)
	if ok, err := h.rt.ImageExists(h.ctx, ref); err != nil || !ok {
		t.Fatalf("after the pull, image exists = %v, %v", ok, err)
	}
	// The base image's layer is already there ("Already exists": done at
	// once); the new one is announced, then downloaded.
	if !slices.ContainsFunc(got, func(p runtime.PullProgress) bool { return p.LayersDone < p.LayersTotal }) {
		t.Errorf("progress %+v: no layer was announced before it was done", got)
	}
	if !slices.ContainsFunc(got, func(p runtime.PullProgress) bool {
		return p.BytesTotal >= podmantest.RegistryLayerBytes && p.BytesDone > 0 && p.BytesDone < p.BytesTotal
	}) {
		t.Errorf("progress %+v: no report counted the new layer's bytes while it arrived", got)
	}
	if len(got) == 0 {
		t.Fatal("no progress")
	}
	if last := got[len(got)-1]; last.LayersTotal < 1 || last.LayersDone != last.LayersTotal || last.BytesDone != last.BytesTotal {
		t.Errorf("last report %+v: want every layer done", last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].LayersDone < got[i-1].LayersDone || got[i].BytesDone < got[i-1].BytesDone {
			t.Errorf("progress went back: %+v then %+v", got[i-1], got[i])
		}
	}
}
