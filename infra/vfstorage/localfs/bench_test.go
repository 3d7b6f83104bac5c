package localfs

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Benchmarks. Each compares the port with the plain file system operation
// it wraps, both measured in the same iterations (alternating, so that
// noise from the shared machine hits both), and reports the ratio as a
// metric: "x-copy" is the port's throughput over the plain copy's.
//
//	go test -run '^$' -bench . -benchtime 3x ./infra/vfstorage/localfs/
//
// The directory must be on a real disk: b.TempDir() unless
// VFSTORAGE_BENCH_DIR names another; tmpfs is refused (its copies cost no
// I/O and its fsync nothing). VFSTORAGE_BENCH_MIB sizes the file (default
// 256).

func benchDir(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("VFSTORAGE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "vfstorage-bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		b.Fatal(err)
	}
	const tmpfsMagic, ext4Magic, xfsMagic = 0x01021994, 0xef53, 0x58465342
	kind := fmt.Sprintf("fs type %#x", st.Type)
	switch st.Type {
	case tmpfsMagic:
		b.Fatalf("%s is on tmpfs: set VFSTORAGE_BENCH_DIR to a directory on a disk", dir)
	case ext4Magic:
		kind = "ext4"
	case xfsMagic:
		kind = "xfs"
	}
	b.Logf("benchmark directory %s (%s)", dir, kind)
	return dir
}

func benchSize(b *testing.B) int64 {
	mib := int64(256)
	if v := os.Getenv("VFSTORAGE_BENCH_MIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("VFSTORAGE_BENCH_MIB=%q", v)
		}
		mib = n
	}
	return mib << 20
}

// benchSetup makes a storage with one folder, and a source file of size
// random bytes next to the host (same disk), read once so that it is in
// the page cache for every contender alike.
func benchSetup(b *testing.B, size int64) (*Storage, vfstorage.Ref, string) {
	b.Helper()
	dir := benchDir(b)
	host := filepath.Join(dir, "host")
	s := openTest(b, Config{Hosts: Hosts{{"bench", host}}, CreateHostDirs: true})
	ref := vfstorage.Ref{Host: "bench", ID: uuid.Must(uuid.NewV7())}
	if err := s.CreateFolder(b.Context(), ref); err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(dir, "source")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, mustOpen(b, src)); err != nil {
		b.Fatal(err)
	}
	return s, ref, src
}

func mustOpen(b *testing.B, path string) *os.File {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// plainCopy is the baseline: io.Copy file to file on the same disk, with
// or without the fsync that makes it durable, from the file itself
// (copy_file_range) or from a reader that hides it (a user-space copy).
func plainCopy(b *testing.B, src, dst string, fsync, stream bool) time.Duration {
	b.Helper()
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	var r io.Reader = in
	if stream {
		r = onlyReader{in}
	}
	if _, err := io.Copy(out, r); err != nil {
		b.Fatal(err)
	}
	if fsync {
		if err := out.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	if err := os.Remove(dst); err != nil {
		b.Fatal(err)
	}
	return d
}

// onlyReader hides a file's type, as an HTTP request body does, so the
// upload copies through user space instead of copy_file_range.
type onlyReader struct{ io.Reader }

// baselines times the plain copies while the benchmark's timer is
// stopped, so that b's own MB/s is the port's alone.
type baselines struct {
	b     *testing.B
	size  int64
	total map[string]time.Duration
}

func (bl *baselines) run(name string, copy func() time.Duration) {
	bl.b.StopTimer()
	if bl.total == nil {
		bl.total = make(map[string]time.Duration)
	}
	bl.total[name] += copy()
	bl.b.StartTimer()
}

// report adds each baseline's MB/s and the port's throughput as a multiple
// of it ("x-<baseline>").
func (bl *baselines) report(port time.Duration) {
	b := bl.b
	mbps := func(d time.Duration) float64 { return float64(bl.size) * float64(b.N) / 1e6 / d.Seconds() }
	for name, d := range bl.total {
		b.ReportMetric(mbps(d), name+"-MB/s")
		b.ReportMetric(mbps(port)/mbps(d), "x-"+name)
	}
}

// BenchmarkUpload: Upload (staging file, fsync, rename into place) against
// io.Copy file→file without and with fsync, in the same iterations. The
// source is a file (the upload can use copy_file_range like the plain
// copy) or a plain reader, as an HTTP body is (user-space copy).
func BenchmarkUpload(b *testing.B) {
	size := benchSize(b)
	s, ref, src := benchSetup(b, size)
	dir := filepath.Dir(src)
	for _, tt := range []struct {
		name   string
		stream bool
	}{
		{"from-file", false},
		{"from-stream", true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			bl := &baselines{b: b, size: size}
			var port time.Duration
			b.SetBytes(size)
			for i := range b.N {
				if i%2 == 0 {
					bl.run("copy", func() time.Duration { return plainCopy(b, src, filepath.Join(dir, "copy"), false, false) })
				}
				b.StopTimer()
				in := mustOpen(b, src)
				b.StartTimer()
				start := time.Now()
				var r io.Reader = in
				if tt.stream {
					r = onlyReader{in}
				}
				if _, err := s.Upload(b.Context(), ref, "f", r, vfstorage.UploadOptions{MaxSize: 1 << 40, Quota: 1 << 40}); err != nil {
					b.Fatal(err)
				}
				port += time.Since(start)
				b.StopTimer()
				// A new file each time, like the plain copy's.
				if err := s.Remove(b.Context(), ref, "f", false); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				bl.run("copy+fsync", func() time.Duration { return plainCopy(b, src, filepath.Join(dir, "copy"), true, false) })
				if tt.stream {
					bl.run("stream-copy+fsync", func() time.Duration { return plainCopy(b, src, filepath.Join(dir, "copy"), true, true) })
				}
				if i%2 == 1 {
					bl.run("copy", func() time.Duration { return plainCopy(b, src, filepath.Join(dir, "copy"), false, false) })
				}
			}
			bl.report(port)
		})
	}
}

// BenchmarkDownload: Download then io.Copy into a file, against os.Open
// then io.Copy into a file, in the same iterations.
func BenchmarkDownload(b *testing.B) {
	size := benchSize(b)
	s, ref, src := benchSetup(b, size)
	if _, err := s.Upload(b.Context(), ref, "f", mustOpen(b, src), vfstorage.UploadOptions{}); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Dir(src)
	stored, err := s.MountSource(ref)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "downloaded")
	bl := &baselines{b: b, size: size}
	var port time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			bl.run("copy", func() time.Duration {
				return plainCopy(b, filepath.Join(stored, "f"), filepath.Join(dir, "copy"), false, false)
			})
		}
		start := time.Now()
		r, _, err := s.Download(b.Context(), ref, "f")
		if err != nil {
			b.Fatal(err)
		}
		w, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(w, r); err != nil {
			b.Fatal(err)
		}
		r.Close()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		port += time.Since(start)
		b.StopTimer()
		if err := os.Remove(out); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if i%2 == 1 {
			bl.run("copy", func() time.Duration {
				return plainCopy(b, filepath.Join(stored, "f"), filepath.Join(dir, "copy"), false, false)
			})
		}
	}
	bl.report(port)
}

const benchFiles = 10_000

// BenchmarkListFiles: one full listing of a directory of 10,000 files per
// op: in one page, in pages of 1,000, and (baseline) os.ReadDir with an
// lstat of every entry, what `ls -l` does.
func BenchmarkListFiles(b *testing.B) {
	dir := benchDir(b)
	s := openTest(b, Config{Hosts: Hosts{{"bench", dir}}})
	ref := vfstorage.Ref{Host: "bench", ID: uuid.Must(uuid.NewV7())}
	if err := s.CreateFolder(b.Context(), ref); err != nil {
		b.Fatal(err)
	}
	mount, err := s.MountSource(ref)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchFiles {
		if err := os.WriteFile(filepath.Join(mount, fmt.Sprintf("file-%05d.dat", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	listAll := func(b *testing.B, limit int) {
		n := 0
		opts := vfstorage.ListOptions{Limit: limit}
		for {
			l, err := s.ListFiles(b.Context(), ref, ".", opts)
			if err != nil {
				b.Fatal(err)
			}
			n += len(l.Entries)
			if l.Next == "" {
				break
			}
			opts.After = l.Next
		}
		if n != benchFiles {
			b.Fatalf("listed %d", n)
		}
	}
	b.Run("port-one-page", func(b *testing.B) {
		for b.Loop() {
			listAll(b, vfstorage.MaxListLimit)
		}
	})
	b.Run("port-pages-of-1000", func(b *testing.B) {
		for b.Loop() {
			listAll(b, 1000)
		}
	})
	b.Run("os.ReadDir+Info", func(b *testing.B) {
		for b.Loop() {
			entries, err := os.ReadDir(mount)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				if _, err := e.Info(); err != nil {
					b.Fatal(err)
				}
			}
			if len(entries) != benchFiles {
				b.Fatalf("listed %d", len(entries))
			}
		}
	})
	b.Run("usage-walk", func(b *testing.B) {
		for b.Loop() {
			if u, err := s.RefreshUsage(b.Context(), ref); err != nil || u.Files != benchFiles {
				b.Fatalf("usage %+v, %v", u, err)
			}
		}
	})
}
