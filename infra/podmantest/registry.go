package podmantest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// CertsDir is where Podman looks for the CA of a registry host:port.
const CertsDir = "/etc/containers/certs.d"

// RegistryLayerBytes is the size of the layer of its own that
// RegistryImage adds (random bytes, so compressed it is as large).
const RegistryLayerBytes = 6 << 20

// RegistryImage serves, for the test, a registry no one else can reach
// (go-containerregistry's in-memory registry over TLS on 127.0.0.1, its
// certificate given to Podman for that host:port only, in CertsDir, until
// the test ends) holding the base image with a layer of random bytes on
// top, and returns the image's reference. The registry sends blobs at a
// slow link's pace (about 3 MB/s), so that a pull of the new layer
// outlasts Podman's one-second progress interval. The image pulled into
// the service is removed at the end. Without the service it ends the test
// like URL; without the right to write CertsDir (not root) it fails.
func RegistryImage(t testing.TB, uri string) string {
	t.Helper()
	base := Image(t, uri)
	client, root, err := clientFor(uri)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 2 * time.Minute

	srv := httptest.NewTLSServer(slowBlobs(registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	dir := filepath.Join(CertsDir, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("trust the test registry (Podman reads %s): %v", CertsDir, err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}

	// The base image as the service exports it, plus a layer of its own.
	res, err := client.Get(root + "/" + apiVersion + "/libpod/images/" + url.PathEscape(base) + "/get?format=docker-archive")
	if err != nil {
		t.Fatalf("export %s: %v", base, err)
	}
	archive, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("export %s: %d %v", base, res.StatusCode, err)
	}
	img, err := tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(archive)), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := random.Layer(RegistryLayerBytes, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.AppendLayers(img, extra); err != nil {
		t.Fatal(err)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	ref := fmt.Sprintf("%s/cairn/pull-%x:latest", host, id)
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := remote.Write(tag, img, remote.WithTransport(srv.Client().Transport), remote.WithContext(ctx)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	t.Cleanup(func() {
		req, err := http.NewRequest(http.MethodDelete, root+"/"+apiVersion+"/libpod/images/"+url.PathEscape(ref)+"?force=true", nil)
		if err == nil {
			if res, err := client.Do(req); err == nil {
				res.Body.Close()
			}
		}
	})
	return ref
}

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
