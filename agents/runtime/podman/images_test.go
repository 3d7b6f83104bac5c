package podman

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// LocalImages finds the images built here under their names, with the
// architecture and labels the python image's build gives it.
func TestLocalImages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	python := podmantest.Python(t, h.uri)
	found, err := h.rt.LocalImages(h.ctx, "localhost/cairn/")
	if err != nil {
		t.Fatal(err)
	}
	byRef := map[string]LocalImage{}
	for _, img := range found {
		if !strings.HasPrefix(img.Reference, "localhost/cairn/") || img.Architecture == "" {
			t.Errorf("listed %+v", img)
		}
		byRef[img.Reference] = img
	}
	if _, ok := byRef[h.image]; !ok {
		t.Errorf("the base image %s is not listed: %+v", h.image, found)
	}
	if py := byRef[python]; py.Labels["ai.backend.service-ports"] != "jupyter:http:8888" || py.Labels["io.cairn.recipe"] == "" {
		t.Errorf("the python image is listed as %+v", py)
	}
	if none, err := h.rt.LocalImages(h.ctx, "localhost/no-such-prefix-"+randomID(t)+"/"); err != nil || len(none) != 0 {
		t.Errorf("another prefix: %+v, %v", none, err)
	}
}
