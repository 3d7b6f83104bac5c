package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

var uploadTests = []suiteTest{
	{"RoundTrip", testUploadRoundTrip},
	{"Replace", testUploadReplace},
	{"NoReplace", testUploadNoReplace},
	{"BadDestination", testUploadBadDestination},
	{"TooLarge", testUploadTooLarge},
	{"OverQuota", testUploadOverQuota},
	{"ReplaceWithinQuota", testUploadReplaceWithinQuota},
	{"FailingReader", testUploadFailingReader},
	{"Cancelled", testUploadCancelled},
	{"ConcurrentSameName", testUploadConcurrentSameName},
	{"ConcurrentQuota", testUploadConcurrentQuota},
}

func testUploadRoundTrip(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	mkdir(t, h, ref, "d")
	for _, size := range []int{0, 1, 4096, 3<<20 + 5} {
		data := pattern(byte(size), size)
		name := fmt.Sprintf("d/f%d", size)
		fi := upload(t, h, ref, name, data)
		if fi.Size != int64(size) || fi.Type != vfstorage.TypeFile || fi.Name != fmt.Sprintf("f%d", size) {
			t.Fatalf("Upload info %+v", fi)
		}
		if got := download(t, h, ref, name); !bytes.Equal(got, data) {
			t.Fatalf("%s: downloaded %d bytes, different from the %d uploaded", name, len(got), size)
		}
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
	wantUsage(t, h, ref)
}

func testUploadReplace(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "f", pattern(1, 5000))
	upload(t, h, ref, "f", []byte("short"))
	if got := download(t, h, ref, "f"); string(got) != "short" {
		t.Fatalf("after replace: %d bytes", len(got))
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: 5, Files: 1}) {
		t.Fatalf("usage %+v", u)
	}
}

func testUploadNoReplace(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "f", []byte("first"))
	_, err := h.Storage.Upload(t.Context(), ref, "f", bytesReader("second"), vfstorage.UploadOptions{NoReplace: true})
	wantErr(t, "NoReplace onto a file", err, domain.KindConflict, vfstorage.ErrExists)
	if _, err := h.Storage.Upload(t.Context(), ref, "g", bytesReader("new"), vfstorage.UploadOptions{NoReplace: true}); err != nil {
		t.Fatalf("NoReplace to a new name: %v", err)
	}
	if got := download(t, h, ref, "f"); string(got) != "first" {
		t.Fatalf("f = %q", got)
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
	wantUsage(t, h, ref)
}

func testUploadBadDestination(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	mkdir(t, h, ref, "d")
	upload(t, h, ref, "file", nil)
	for _, tt := range []struct {
		path   string
		kind   domain.Kind
		reason error
	}{
		{"d", domain.KindConflict, vfstorage.ErrIsDir},
		{".", domain.KindConflict, vfstorage.ErrIsDir},
		{"missing/f", domain.KindNotFound, vfstorage.ErrNotFound},
		{"file/f", domain.KindConflict, vfstorage.ErrNotDir},
	} {
		_, err := h.Storage.Upload(t.Context(), ref, tt.path, bytesReader("data"), vfstorage.UploadOptions{})
		wantErr(t, tt.path, err, tt.kind, tt.reason)
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
}

// refused checks that a failed upload to path left the folder as it was.
func refused(t *testing.T, h Harness, ref vfstorage.Ref, path string, before []string) {
	t.Helper()
	if after := tree(t, mountDir(t, h, ref)); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused upload to %s changed the folder:\n%v\nwas:\n%v", path, after, before)
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
	wantUsage(t, h, ref)
}

func testUploadTooLarge(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "old", pattern(1, 10))
	before := tree(t, mountDir(t, h, ref))
	for _, tt := range []struct {
		path string
		size int
	}{{"new", 1001}, {"old", 1001}, {"big", 20 << 20}} {
		_, err := h.Storage.Upload(t.Context(), ref, tt.path, bytes.NewReader(pattern(2, tt.size)), vfstorage.UploadOptions{MaxSize: 1000})
		wantErr(t, fmt.Sprintf("%d bytes over a 1000-byte limit", tt.size), err, domain.KindTooLarge, vfstorage.ErrTooLarge)
		refused(t, h, ref, tt.path, before)
	}
	if _, err := h.Storage.Upload(t.Context(), ref, "exact", bytes.NewReader(pattern(2, 1000)), vfstorage.UploadOptions{MaxSize: 1000}); err != nil {
		t.Fatalf("exactly the limit: %v", err)
	}
}

func testUploadOverQuota(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "a", pattern(1, 600))
	before := tree(t, mountDir(t, h, ref))
	opts := vfstorage.UploadOptions{Quota: 1000}
	_, err := h.Storage.Upload(t.Context(), ref, "b", bytes.NewReader(pattern(2, 401)), opts)
	wantErr(t, "401 bytes with 400 left", err, domain.KindQuotaExceeded, vfstorage.ErrQuotaExceeded)
	refused(t, h, ref, "b", before)
	// MaxSize larger than the room: the quota is what fails.
	opts.MaxSize = 5000
	_, err = h.Storage.Upload(t.Context(), ref, "b", bytes.NewReader(pattern(2, 3000)), opts)
	wantErr(t, "3000 bytes with 400 left", err, domain.KindQuotaExceeded, vfstorage.ErrQuotaExceeded)
	refused(t, h, ref, "b", before)
	if _, err := h.Storage.Upload(t.Context(), ref, "b", bytes.NewReader(pattern(2, 400)), opts); err != nil {
		t.Fatalf("exactly the room left: %v", err)
	}
	if u := wantUsage(t, h, ref); u.Bytes != 1000 {
		t.Fatalf("usage %+v", u)
	}
	_, err = h.Storage.Upload(t.Context(), ref, "c", bytes.NewReader(pattern(2, 1)), opts)
	wantErr(t, "a full folder", err, domain.KindQuotaExceeded, vfstorage.ErrQuotaExceeded)
}

// testUploadReplaceWithinQuota: replacing a file counts only the growth.
func testUploadReplaceWithinQuota(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "a", pattern(1, 900))
	if _, err := h.Storage.Upload(t.Context(), ref, "a", bytes.NewReader(pattern(2, 1000)), vfstorage.UploadOptions{Quota: 1000}); err != nil {
		t.Fatalf("replacing 900 bytes with 1000 under a 1000-byte quota: %v", err)
	}
	wantUsage(t, h, ref)
}

type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, r.err
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

// testUploadFailingReader: a body that breaks off leaves nothing; the
// reader's error is in the chain.
func testUploadFailingReader(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "f", []byte("old"))
	before := tree(t, mountDir(t, h, ref))
	broken := errors.New("connection reset")
	_, err := h.Storage.Upload(t.Context(), ref, "f", &failingReader{n: 100_000, err: broken}, vfstorage.UploadOptions{})
	wantErr(t, "a broken body", err, domain.KindInvalid, broken)
	refused(t, h, ref, "f", before)
}

// cancellingReader hands out n bytes, then cancels the upload's context
// (as a server does when the client goes away) and returns its error.
type cancellingReader struct {
	ctx    context.Context
	cancel context.CancelFunc
	n      int
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		r.cancel()
		return 0, r.ctx.Err()
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

// testUploadCancelled: an upload whose context ends leaves nothing, even
// when it has already been cancelled before it starts.
func testUploadCancelled(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	before := tree(t, mountDir(t, h, ref))
	_, err := h.Storage.Upload(ctxCancelled(t), ref, "f", bytesReader("data"), vfstorage.UploadOptions{})
	wantErr(t, "cancelled before", err, domain.KindUnavailable, context.Canceled)
	refused(t, h, ref, "f", before)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err = h.Storage.Upload(ctx, ref, "f", &cancellingReader{ctx: ctx, cancel: cancel, n: 1 << 20}, vfstorage.UploadOptions{})
	wantErr(t, "cancelled during the stream", err, domain.KindUnavailable, context.Canceled)
	refused(t, h, ref, "f", before)
}

// slowReader returns its data in small reads, so concurrent uploads
// interleave.
type slowReader struct {
	data []byte
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 4096)
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// testUploadConcurrentSameName: uploads to one path, each of different
// bytes, while readers download it: every read sees one upload's bytes
// whole, never a mix or a partial file, and the file ends as one of them.
func testUploadConcurrentSameName(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	const writers, size = 6, 256 << 10
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = pattern(byte(i*40), size)
	}
	upload(t, h, ref, "f", contents[0])
	isOne := func(b []byte) bool {
		for _, c := range contents {
			if bytes.Equal(b, c) {
				return true
			}
		}
		return false
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	stop := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			for range 4 {
				if _, err := h.Storage.Upload(t.Context(), ref, "f", &slowReader{contents[i]}, vfstorage.UploadOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var rd sync.WaitGroup
	rd.Go(func() {
		for reads := 0; ; reads++ {
			select {
			case <-stop:
				if reads == 0 {
					errs <- errors.New("the reader never read")
				}
				return
			default:
			}
			r, _, err := h.Storage.Download(t.Context(), ref, "f")
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil || !isOne(b) {
				errs <- fmt.Errorf("a download read %d bytes matching no upload (%v)", len(b), err)
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	rd.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := download(t, h, ref, "f"); !isOne(got) {
		t.Fatal("the final file matches no upload")
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: size, Files: 1}) {
		t.Fatalf("usage %+v", u)
	}
}

// testUploadConcurrentQuota: uploads racing for the last room of a quota
// never take the folder over it together.
func testUploadConcurrentQuota(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	const quota, each, writers = 10 << 10, 3 << 10, 8
	var wg sync.WaitGroup
	results := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			_, err := h.Storage.Upload(t.Context(), ref, fmt.Sprintf("f%d", i), &slowReader{pattern(byte(i), each)}, vfstorage.UploadOptions{Quota: quota})
			results <- err
		})
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, vfstorage.ErrQuotaExceeded):
			t.Fatalf("Upload: %v", err)
		}
	}
	if ok != quota/each {
		t.Fatalf("%d uploads of %d bytes fit a %d-byte quota, want %d", ok, each, quota, quota/each)
	}
	if u := wantUsage(t, h, ref); u.Bytes != int64(ok*each) || u.Bytes > quota {
		t.Fatalf("usage %+v", u)
	}
	if left := staged(t, h, ref); len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
}
