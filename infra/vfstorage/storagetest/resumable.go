package storagetest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

var resumableTests = []suiteTest{
	{"Chunks", testResumableChunks},
	{"WrongOffset", testResumableWrongOffset},
	{"Checksum", testResumableChecksum},
	{"CutChunk", testResumableCutChunk},
	{"OverLength", testResumableOverLength},
	{"Reservation", testResumableReservation},
	{"Limits", testResumableLimits},
	{"NoReplace", testResumableNoReplace},
	{"Empty", testResumableEmpty},
	{"Abort", testResumableAbort},
	{"TamperedDescription", testResumableTamperedDescription},
}

func createUpload(t *testing.T, h Harness, ref vfstorage.Ref, p string, length int64, opts vfstorage.UploadOptions) vfstorage.UploadState {
	t.Helper()
	st, err := h.Storage.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: p, Length: length, Owner: "u1", Metadata: "m", Options: opts})
	if err != nil {
		t.Fatalf("CreateUpload(%q, %d): %v", p, length, err)
	}
	if !vfstorage.ValidUploadID(st.ID) || st.Length != length || st.Owner != "u1" || st.Metadata != "m" || st.ExpiresAt.IsZero() {
		t.Fatalf("CreateUpload: state %+v", st)
	}
	return st
}

func appendChunk(t *testing.T, h Harness, ref vfstorage.Ref, id string, offset int64, chunk []byte) vfstorage.UploadState {
	t.Helper()
	st, err := h.Storage.AppendUpload(t.Context(), ref, id, offset, bytes.NewReader(chunk), nil)
	if err != nil {
		t.Fatalf("AppendUpload(at %d, %d bytes): %v", offset, len(chunk), err)
	}
	return st
}

func wantOffset(t *testing.T, h Harness, ref vfstorage.Ref, id string, want int64) {
	t.Helper()
	st, err := h.Storage.UploadState(t.Context(), ref, id)
	if err != nil {
		t.Fatalf("UploadState: %v", err)
	}
	if st.Offset != want {
		t.Fatalf("offset %d, want %d", st.Offset, want)
	}
}

func usageOf(t *testing.T, h Harness, ref vfstorage.Ref) vfstorage.Usage {
	t.Helper()
	u, err := h.Storage.Usage(t.Context(), ref)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	return u
}

// Chunks append in order; the last puts the file (parents made) and the
// upload is gone; usage holds the length throughout.
func testResumableChunks(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	data := pattern(7, 3<<20+11)
	st := createUpload(t, h, ref, "a/b/c.bin", int64(len(data)), vfstorage.UploadOptions{})
	if u := usageOf(t, h, ref); u.Bytes != int64(len(data)) || u.Files != 0 {
		t.Fatalf("usage with the upload reserved: %+v", u)
	}
	var off int64
	for _, size := range []int{1 << 20, 1, 2<<20 - 1} {
		got := appendChunk(t, h, ref, st.ID, off, data[off:off+int64(size)])
		off += int64(size)
		if got.Offset != off || got.Done {
			t.Fatalf("after a chunk: %+v, want offset %d", got, off)
		}
		wantOffset(t, h, ref, st.ID, off)
	}
	done := appendChunk(t, h, ref, st.ID, off, data[off:])
	if !done.Done || done.Offset != int64(len(data)) || done.File.Size != int64(len(data)) || done.File.Name != "c.bin" {
		t.Fatalf("last chunk: %+v", done)
	}
	if got := download(t, h, ref, "a/b/c.bin"); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("the file differs from what was sent")
	}
	_, err := h.Storage.UploadState(t.Context(), ref, st.ID)
	wantErr(t, "UploadState of a finished upload", err, domain.KindNotFound, vfstorage.ErrNotFound)
	wantUsage(t, h, ref) // the reservation became the file (and a, a/b)
}

func testResumableWrongOffset(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	st := createUpload(t, h, ref, "f", 10, vfstorage.UploadOptions{})
	appendChunk(t, h, ref, st.ID, 0, []byte("01234"))
	for _, off := range []int64{0, 4, 6, 10} {
		_, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, off, bytesReader("xxxxx"), nil)
		wantErr(t, "a chunk at the wrong offset", err, domain.KindConflict, vfstorage.ErrOffset)
	}
	wantOffset(t, h, ref, st.ID, 5)
	appendChunk(t, h, ref, st.ID, 5, []byte("56789"))
	if got := download(t, h, ref, "f"); string(got) != "0123456789" {
		t.Fatalf("file %q", got)
	}
}

// A chunk that does not match its checksum is discarded whole; matching
// ones (sha1, sha256) are kept.
func testResumableChecksum(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	st := createUpload(t, h, ref, "f", 12, vfstorage.UploadOptions{})
	s1 := sha1.Sum([]byte("abcd"))
	if _, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 0, bytesReader("abcd"), &vfstorage.Checksum{Algorithm: "sha1", Sum: s1[:]}); err != nil {
		t.Fatal(err)
	}
	bad := sha256.Sum256([]byte("efgX"))
	_, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 4, bytesReader("efgh"), &vfstorage.Checksum{Algorithm: "sha256", Sum: bad[:]})
	wantErr(t, "a chunk with a wrong checksum", err, domain.KindInvalid, vfstorage.ErrChecksum)
	wantOffset(t, h, ref, st.ID, 4)
	_, err = h.Storage.AppendUpload(t.Context(), ref, st.ID, 4, bytesReader("efgh"), &vfstorage.Checksum{Algorithm: "md5", Sum: bad[:16]})
	wantErr(t, "an unsupported algorithm", err, domain.KindInvalid, vfstorage.ErrInvalid)
	wantOffset(t, h, ref, st.ID, 4)
	good := sha256.Sum256([]byte("efghijkl"))
	if _, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 4, bytesReader("efghijkl"), &vfstorage.Checksum{Algorithm: "sha256", Sum: good[:]}); err != nil {
		t.Fatal(err)
	}
	if got := download(t, h, ref, "f"); string(got) != "abcdefghijkl" {
		t.Fatalf("file %q", got)
	}
}

// cutReader gives n bytes of data and then fails, as a connection cut
// mid-chunk does.
type cutReader struct {
	r io.Reader
}

var errCut = errors.New("connection cut")

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, errCut
	}
	return n, err
}

// A chunk cut midway keeps what came (without a checksum) or nothing
// (with one); either way the client resumes at the offset stored.
func testResumableCutChunk(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	data := pattern(3, 1<<20)
	st := createUpload(t, h, ref, "f", int64(len(data)), vfstorage.UploadOptions{})
	_, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 0, &cutReader{bytes.NewReader(data[:300_000])}, nil)
	if err == nil || !errors.Is(err, errCut) {
		t.Fatalf("a cut chunk: %v", err)
	}
	wantOffset(t, h, ref, st.ID, 300_000)
	sum := sha256.Sum256(data[300_000:600_000])
	_, err = h.Storage.AppendUpload(t.Context(), ref, st.ID, 300_000, &cutReader{bytes.NewReader(data[300_000:500_000])},
		&vfstorage.Checksum{Algorithm: "sha256", Sum: sum[:]})
	if err == nil {
		t.Fatal("a cut checked chunk succeeded")
	}
	wantOffset(t, h, ref, st.ID, 300_000)
	appendChunk(t, h, ref, st.ID, 300_000, data[300_000:])
	if got := download(t, h, ref, "f"); !bytes.Equal(got, data) {
		t.Fatal("the resumed file differs from what was sent")
	}
}

func testResumableOverLength(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	st := createUpload(t, h, ref, "f", 6, vfstorage.UploadOptions{})
	appendChunk(t, h, ref, st.ID, 0, []byte("abc"))
	_, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 3, bytesReader("defg"), nil)
	wantErr(t, "more bytes than the length", err, domain.KindTooLarge, vfstorage.ErrTooLarge)
	wantOffset(t, h, ref, st.ID, 3)
}

// The length counts against the quota from creation; aborting releases it.
func testResumableReservation(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "old", pattern(1, 100))
	opts := vfstorage.UploadOptions{Quota: 1000}
	a := createUpload(t, h, ref, "a", 800, opts)
	_, err := h.Storage.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: "b", Length: 101, Options: opts})
	wantErr(t, "a second upload over the quota", err, domain.KindQuotaExceeded, vfstorage.ErrQuotaExceeded)
	// An upload in another process's view: the walk counts it too.
	if u, err := h.Storage.RefreshUsage(t.Context(), ref); err != nil || u.Bytes != 900 || u.Files != 1 {
		t.Fatalf("walked usage %+v, %v; want 900 bytes (100 + 800 reserved), 1 file", u, err)
	}
	b := createUpload(t, h, ref, "b", 100, opts)
	if err := h.Storage.AbortUpload(t.Context(), ref, a.ID); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, h, ref); u.Bytes != 200 {
		t.Fatalf("usage after abort %+v, want 200", u)
	}
	appendChunk(t, h, ref, b.ID, 0, pattern(2, 100))
	wantUsage(t, h, ref)
}

func testResumableLimits(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "file", []byte("x"))
	mkdir(t, h, ref, "dir")
	for _, c := range []struct {
		path   string
		length int64
		opts   vfstorage.UploadOptions
		kind   domain.Kind
		reason error
	}{
		{"big", 101, vfstorage.UploadOptions{MaxSize: 100}, domain.KindTooLarge, vfstorage.ErrTooLarge},
		{"big", 11, vfstorage.UploadOptions{Quota: 11}, domain.KindQuotaExceeded, vfstorage.ErrQuotaExceeded},
		{"dir", 1, vfstorage.UploadOptions{}, domain.KindConflict, vfstorage.ErrIsDir},
		{"file/x", 1, vfstorage.UploadOptions{}, domain.KindConflict, vfstorage.ErrNotDir},
		{".", 1, vfstorage.UploadOptions{}, domain.KindConflict, vfstorage.ErrIsDir},
		{"../x", 1, vfstorage.UploadOptions{}, domain.KindInvalid, vfstorage.ErrInvalidPath},
		{vfstorage.ReservedName + "/x", 1, vfstorage.UploadOptions{}, domain.KindInvalid, vfstorage.ErrInvalidPath},
		{"neg", -1, vfstorage.UploadOptions{}, domain.KindInvalid, vfstorage.ErrInvalid},
	} {
		_, err := h.Storage.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: c.path, Length: c.length, Options: c.opts})
		wantErr(t, "CreateUpload "+c.path, err, c.kind, c.reason)
	}
	wantUsage(t, h, ref)
}

// NoReplace refuses an existing file at creation, and at completion a file
// that appeared meanwhile (the upload is then gone, its room released).
func testResumableNoReplace(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "f", []byte("old"))
	_, err := h.Storage.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: "f", Length: 3, Options: vfstorage.UploadOptions{NoReplace: true}})
	wantErr(t, "NoReplace over a file", err, domain.KindConflict, vfstorage.ErrExists)
	st := createUpload(t, h, ref, "g", 3, vfstorage.UploadOptions{NoReplace: true})
	upload(t, h, ref, "g", []byte("won"))
	_, err = h.Storage.AppendUpload(t.Context(), ref, st.ID, 0, bytesReader("new"), nil)
	wantErr(t, "completing over a file that appeared", err, domain.KindConflict, vfstorage.ErrExists)
	if got := download(t, h, ref, "g"); string(got) != "won" {
		t.Fatalf("g is %q", got)
	}
	_, err = h.Storage.UploadState(t.Context(), ref, st.ID)
	wantErr(t, "the refused upload", err, domain.KindNotFound, vfstorage.ErrNotFound)
	wantUsage(t, h, ref)
	// Without NoReplace the file is replaced.
	st = createUpload(t, h, ref, "f", 3, vfstorage.UploadOptions{})
	appendChunk(t, h, ref, st.ID, 0, []byte("new"))
	if got := download(t, h, ref, "f"); string(got) != "new" {
		t.Fatalf("f is %q", got)
	}
	wantUsage(t, h, ref)
}

func testResumableEmpty(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	st := createUpload(t, h, ref, "d/empty", 0, vfstorage.UploadOptions{})
	if !st.Done || st.File.Size != 0 || st.File.Type != vfstorage.TypeFile {
		t.Fatalf("an empty upload: %+v", st)
	}
	if got := download(t, h, ref, "d/empty"); len(got) != 0 {
		t.Fatalf("%d bytes", len(got))
	}
	wantUsage(t, h, ref)
}

func testResumableAbort(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	st := createUpload(t, h, ref, "f", 10, vfstorage.UploadOptions{})
	appendChunk(t, h, ref, st.ID, 0, []byte("01234"))
	if err := h.Storage.AbortUpload(t.Context(), ref, st.ID); err != nil {
		t.Fatal(err)
	}
	err := h.Storage.AbortUpload(t.Context(), ref, st.ID)
	wantErr(t, "aborting twice", err, domain.KindNotFound, vfstorage.ErrNotFound)
	_, err = h.Storage.AppendUpload(t.Context(), ref, st.ID, 5, bytesReader("56789"), nil)
	wantErr(t, "appending to an aborted upload", err, domain.KindNotFound, vfstorage.ErrNotFound)
	_, err = h.Storage.UploadState(t.Context(), ref, "../../etc")
	wantErr(t, "a malformed id", err, domain.KindNotFound, vfstorage.ErrNotFound)
	if _, err := h.Storage.Stat(t.Context(), ref, "f"); !errors.Is(err, vfstorage.ErrNotFound) {
		t.Fatalf("Stat of an aborted upload's path: %v", err)
	}
	wantUsage(t, h, ref)
}

// A session that mounts the folder can rewrite what the backend keeps in
// its staging directory: an upload whose description is made to name a
// path out of the folder (or into the staging directory) puts nothing
// there.
func testResumableTamperedDescription(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	for _, evil := range []string{"../../escaped", "/tmp/escaped", vfstorage.ReservedName + "/x"} {
		st := createUpload(t, h, ref, "f", 3, vfstorage.UploadOptions{})
		var found bool
		err := filepath.WalkDir(filepath.Join(dir, vfstorage.ReservedName), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(p, st.ID+".json") {
				return err
			}
			found = true
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var desc map[string]any
			if err := json.Unmarshal(raw, &desc); err != nil {
				return err
			}
			for k, v := range desc {
				if v == "f" {
					desc[k] = evil
				}
			}
			raw, _ = json.Marshal(desc)
			return os.WriteFile(p, raw, 0o600)
		})
		if err != nil || !found {
			t.Fatalf("no JSON description of the upload in the staging directory to tamper with (%v)", err)
		}
		if _, err := h.Storage.AppendUpload(t.Context(), ref, st.ID, 0, bytesReader("abc"), nil); err == nil {
			t.Fatalf("an upload described as %q completed", evil)
		}
		if _, err := os.Lstat(filepath.Join(dir, "f")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%q: f exists: %v", evil, err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "..", "..", "escaped"), "/tmp/escaped"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s exists: %v", p, err)
		}
	}
}
