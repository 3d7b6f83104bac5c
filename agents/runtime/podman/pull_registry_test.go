package podman

import (
	"bytes"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/cairnhq/cairn/agents/runtime"
)

// certsDir is where Podman looks for the CA of a registry host:port.
const certsDir = "/etc/containers/certs.d"

// A real pull, from a registry served by this test (go-containerregistry's
// in-memory registry over TLS, its certificate given to Podman for that
// host:port only, removed afterwards): the base image with a layer of
// random bytes on top, so that Podman downloads at least one layer, served
// at a slow link's pace so that the download outlasts Podman's one-second
// progress interval. The progress reports announce the layers before they
// are all done, count the new layer's bytes as they arrive, and end with
// every layer done; the image is then present.
func TestPullReportsProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := httptest.NewTLSServer(slowBlobs(registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	dir := filepath.Join(certsDir, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("trust the test registry (Podman reads %s): %v", certsDir, err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}

	// The base image as Podman exports it, plus a layer of its own.
	var archive bytes.Buffer
	if err := images.Export(h.rt.call(h.ctx), []string{h.image}, &archive, &images.ExportOptions{Format: ptr("docker-archive")}); err != nil {
		t.Fatalf("export %s: %v", h.image, err)
	}
	base, err := tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(archive.Bytes())), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := random.Layer(layerBytes, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(base, extra)
	if err != nil {
		t.Fatal(err)
	}
	ref := host + "/cairn/pull-" + randomID(t) + ":latest"
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithTransport(srv.Client().Transport), remote.WithContext(h.ctx)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	t.Cleanup(func() { _, _ = images.Remove(h.rt.call(h.ctx), []string{ref}, nil) })

	var got []runtime.PullProgress
	if err := h.rt.EnsureImage(h.ctx, ref, func(p runtime.PullProgress) { got = append(got, p) }); err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	t.Logf("progress of the pull: %+v", got)
	if ok, err := h.rt.ImageExists(h.ctx, ref); err != nil || !ok {
		t.Fatalf("after the pull, image exists = %v, %v", ok, err)
	}
	if len(got) < 2 {
		t.Fatalf("progress %+v: want the layers announced, then done", got)
	}
	// The base image's layer is already there ("Already exists": done at
	// once); the new one is announced, then downloaded.
	if !slices.ContainsFunc(got, func(p runtime.PullProgress) bool { return p.LayersDone < p.LayersTotal }) {
		t.Errorf("progress %+v: no layer was announced before it was done", got)
	}
	if last := got[len(got)-1]; last.LayersTotal < 1 || last.LayersDone != last.LayersTotal || last.BytesDone != last.BytesTotal {
		t.Errorf("last report %+v: want every layer done", last)
	}
	partial := slices.ContainsFunc(got, func(p runtime.PullProgress) bool {
		return p.BytesTotal >= layerBytes && p.BytesDone > 0 && p.BytesDone < p.BytesTotal
	})
	if !partial {
		t.Errorf("progress %+v: no report counted the new layer's bytes while it arrived", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].LayersDone < got[i-1].LayersDone || got[i].BytesDone < got[i-1].BytesDone {
			t.Errorf("progress went back: %+v then %+v", got[i-1], got[i])
		}
	}
}

// layerBytes is the size of the test image's own layer (random bytes, so
// compressed it is as large).
const layerBytes = 6 << 20

// slowBlobs serves blob downloads at about 3 MB/s, as a slow link would:
// in 64 KiB writes, each flushed and followed by a pause.
func slowBlobs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&slowWriter{ResponseWriter: w}, r)
	})
}

type slowWriter struct{ http.ResponseWriter }

func (s *slowWriter) Write(b []byte) (int, error) {
	const chunk = 64 << 10
	n := 0
	for len(b) > 0 {
		k := min(chunk, len(b))
		m, err := s.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		b = b[k:]
		time.Sleep(20 * time.Millisecond) // the link's pace, not a wait for anything
	}
	return n, nil
}
