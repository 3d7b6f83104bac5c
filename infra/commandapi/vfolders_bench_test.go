package commandapi_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of the file API over a real TCP connection, each next to
// the plain file operation it wraps, measured in the same iterations on
// the same disk, reported as ratios ("x-copy": the API's throughput over
// the plain copy's; target ≥ 0.7x).
//
//	go test -run '^$' -bench VFolder -benchtime 5x ./readapi/
//
// VFOLDER_BENCH_MIB sizes the file (default 64). The storage host is in
// b.TempDir(), on the disk the temporary directory is on.

func benchMiB(b *testing.B) int64 {
	mib := int64(64)
	if v := os.Getenv("VFOLDER_BENCH_MIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("VFOLDER_BENCH_MIB=%q", v)
		}
		mib = n
	}
	return mib << 20
}

// serve runs the env's app on a free port until the benchmark ends.
func serve(b *testing.B, e *env) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go e.app.Listener(ln) //nolint:errcheck // ends with the shutdown below
	b.Cleanup(func() { _ = e.app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

func benchFolder(b *testing.B, e *env, api string) string {
	b.Helper()
	id, _ := e.mkfolder(b, vfAlice, `{"name":"bench"}`)
	return api + "/v1/vfolders/" + id
}

// source writes size random bytes to a file beside the storage (same
// disk) and reads it once so every contender finds it in the page cache.
func source(b *testing.B, size int64) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "source")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if _, err := os.ReadFile(p); err != nil {
		b.Fatal(err)
	}
	return p
}

// plainCopy copies src into a new file of dir, synced when sync is set.
func plainCopy(b *testing.B, src, dir string, sync bool) {
	b.Helper()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, "copy-")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if sync {
		if err := out.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(out.Name()); err != nil {
		b.Fatal(err)
	}
}

func send(b *testing.B, e *env, req *http.Request, want int, sink io.Writer) {
	b.Helper()
	req.Header.Set("Authorization", "Bearer "+e.token(vfAlice))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(sink, resp.Body); err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d", req.Method, req.URL, resp.StatusCode)
	}
}

func report(b *testing.B, size int64, api, plain time.Duration) {
	mb := float64(size) * float64(b.N) / 1e6
	b.ReportMetric(mb/api.Seconds(), "api-MB/s")
	b.ReportMetric(mb/plain.Seconds(), "copy-MB/s")
	b.ReportMetric(plain.Seconds()/api.Seconds(), "x-copy")
	b.ReportMetric(0, "ns/op")
}

// Upload: PUT of a file (streamed, staged, fsynced, renamed) vs io.Copy
// file→file + fsync (an upload is durable when it returns).
func BenchmarkVFolderUpload(b *testing.B) {
	e := newEnv(b, envOptions{anyUploadSize: true})
	api := serve(b, e)
	folder := benchFolder(b, e, api)
	size := benchMiB(b)
	src := source(b, size)
	scratch := b.TempDir()
	var apiT, plainT time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		f, err := os.Open(src)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		req, _ := http.NewRequestWithContext(context.Background(), "PUT", folder+"/files/content?path=f"+strconv.Itoa(i%2), f)
		req.ContentLength = size
		send(b, e, req, http.StatusCreated, io.Discard)
		apiT += time.Since(start)
		f.Close()
		start = time.Now()
		plainCopy(b, src, scratch, true)
		plainT += time.Since(start)
	}
	report(b, size, apiT, plainT)
}

// Download: GET of a file into a file vs io.Copy file→file.
func BenchmarkVFolderDownload(b *testing.B) {
	e := newEnv(b, envOptions{anyUploadSize: true})
	api := serve(b, e)
	folder := benchFolder(b, e, api)
	size := benchMiB(b)
	src := source(b, size)
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", folder+"/files/content?path=f", f)
	send(b, e, req, http.StatusCreated, io.Discard)
	f.Close()
	scratch := b.TempDir()
	var apiT, plainT time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		out, err := os.CreateTemp(scratch, "dl-")
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		req, _ := http.NewRequest("GET", folder+"/files/content?path=f", nil)
		send(b, e, req, http.StatusOK, out)
		apiT += time.Since(start)
		out.Close()
		os.Remove(out.Name())
		start = time.Now()
		plainCopy(b, src, scratch, false)
		plainT += time.Since(start)
	}
	report(b, size, apiT, plainT)
}

// ListFiles: GET of a directory of 10,000 files in one page vs
// os.ReadDir + Info of the same directory.
func BenchmarkVFolderListFiles10k(b *testing.B) {
	e := newEnv(b, envOptions{anyUploadSize: true})
	api := serve(b, e)
	folder := benchFolder(b, e, api)
	dir, err := e.vfs.MountSource(refOf(b, folder[len(folder)-36:]))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%05d", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var apiT, plainT time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		req, _ := http.NewRequest("GET", folder+"/files?limit=10000", nil)
		send(b, e, req, http.StatusOK, io.Discard)
		apiT += time.Since(start)
		start = time.Now()
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, de := range entries {
			if _, err := de.Info(); err != nil {
				b.Fatal(err)
			}
		}
		plainT += time.Since(start)
	}
	b.ReportMetric(float64(apiT.Milliseconds())/float64(b.N), "api-ms/op")
	b.ReportMetric(float64(plainT.Milliseconds())/float64(b.N), "readdir-ms/op")
}
