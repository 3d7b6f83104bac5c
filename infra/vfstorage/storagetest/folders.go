package storagetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

var folderTests = []suiteTest{
	{"Hosts", testHosts},
	{"CreateIsIdempotent", testCreateIdempotent},
	{"UnknownHost", testUnknownHost},
	{"MissingFolder", testMissingFolder},
	{"Delete", testDeleteFolder},
	{"Clone", testClone},
	{"CloneAcrossHosts", testCloneAcrossHosts},
	{"CloneToExisting", testCloneToExisting},
	{"CloneCancelled", testCloneCancelled},
}

// testHosts: the harness's hosts are listed, sorted.
func testHosts(t *testing.T, h Harness) {
	hosts := h.Storage.Hosts()
	var names []string
	for _, hi := range hosts {
		names = append(names, hi.Name)
		if hi.Backend == "" {
			t.Errorf("host %s: no backend name", hi.Name)
		}
	}
	if !slices.IsSorted(names) || !slices.Contains(names, h.Host) || (h.OtherHost != "" && !slices.Contains(names, h.OtherHost)) {
		t.Fatalf("Hosts() = %v, want sorted and holding %q, %q", names, h.Host, h.OtherHost)
	}
}

// testCreateIdempotent: a new folder is an empty directory; creating it
// again keeps what it holds.
func testCreateIdempotent(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("mount source %s: %v", dir, err)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{}) {
		t.Fatalf("a new folder's usage is %+v", u)
	}
	upload(t, h, ref, "keep", []byte("kept"))
	if err := h.Storage.CreateFolder(t.Context(), ref); err != nil {
		t.Fatalf("CreateFolder again: %v", err)
	}
	if got := download(t, h, ref, "keep"); string(got) != "kept" {
		t.Fatalf("after a second CreateFolder the file holds %q", got)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: 4, Files: 1}) {
		t.Fatalf("usage %+v", u)
	}
}

// testUnknownHost: every operation on a host that is not configured is
// invalid input naming the host.
func testUnknownHost(t *testing.T, h Harness) {
	ctx := t.Context()
	ref := vfstorage.Ref{Host: "no-such-host", ID: uuid.Must(uuid.NewV7())}
	s := h.Storage
	_, listErr := s.ListFiles(ctx, ref, ".", vfstorage.ListOptions{})
	_, usageErr := s.Usage(ctx, ref)
	_, mountErr := s.MountSource(ref)
	_, upErr := s.Upload(ctx, ref, "f", bytesReader("x"), vfstorage.UploadOptions{})
	for name, err := range map[string]error{
		"CreateFolder": s.CreateFolder(ctx, ref),
		"DeleteFolder": s.DeleteFolder(ctx, ref),
		"ListFiles":    listErr,
		"Usage":        usageErr,
		"MountSource":  mountErr,
		"Upload":       upErr,
		"Clone":        s.CloneFolder(ctx, newFolder(t, h), ref, nil),
	} {
		wantErr(t, name, err, domain.KindInvalid, vfstorage.ErrUnknownHost)
		var de *domain.Error
		if errors.As(err, &de); de.Field != "host" {
			t.Errorf("%s: field %q, want host", name, de.Field)
		}
	}
}

// testMissingFolder: operations on a folder that was never created are
// not-found.
func testMissingFolder(t *testing.T, h Harness) {
	ctx := t.Context()
	ref := vfstorage.Ref{Host: h.Host, ID: uuid.Must(uuid.NewV7())}
	_, listErr := h.Storage.ListFiles(ctx, ref, ".", vfstorage.ListOptions{})
	_, usageErr := h.Storage.Usage(ctx, ref)
	_, mountErr := h.Storage.MountSource(ref)
	_, _, dlErr := h.Storage.Download(ctx, ref, "f")
	for name, err := range map[string]error{
		"ListFiles": listErr, "Usage": usageErr, "MountSource": mountErr, "Download": dlErr,
		"Mkdir": h.Storage.Mkdir(ctx, ref, "d", false),
	} {
		wantErr(t, name, err, domain.KindNotFound, vfstorage.ErrNoFolder)
	}
}

// testDeleteFolder: deleting removes every file, and is idempotent.
func testDeleteFolder(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	mkdir(t, h, ref, "a/b/c")
	upload(t, h, ref, "a/b/c/f", pattern(1, 1000))
	upload(t, h, ref, "top", pattern(2, 10))
	dir := mountDir(t, h, ref)
	if err := h.Storage.DeleteFolder(t.Context(), ref); err != nil {
		t.Fatalf("DeleteFolder: %v", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after DeleteFolder, %s: %v", dir, err)
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ref.ID.String()) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := h.Storage.DeleteFolder(t.Context(), ref); err != nil {
		t.Fatalf("DeleteFolder again: %v", err)
	}
	_, err = h.Storage.Usage(t.Context(), ref)
	wantErr(t, "Usage after delete", err, domain.KindNotFound, vfstorage.ErrNoFolder)
	// The id can be used again.
	if err := h.Storage.CreateFolder(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{}) {
		t.Fatalf("re-created folder's usage %+v", u)
	}
}

// cloneSource makes a folder with a bit of everything.
func cloneSource(t *testing.T, h Harness) vfstorage.Ref {
	t.Helper()
	src := newFolder(t, h)
	mkdir(t, h, src, "dir/sub/deeper")
	mkdir(t, h, src, "empty")
	upload(t, h, src, "dir/sub/deeper/big", pattern(3, 9<<20+17)) // more than one copy chunk
	upload(t, h, src, "dir/small", pattern(4, 100))
	upload(t, h, src, "zero", nil)
	dir := mountDir(t, h, src)
	if err := os.Chmod(filepath.Join(dir, "dir/small"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "zero"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir/small", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "dir/sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, src)
	return src
}

// testClone: the clone holds the same tree (contents, modes, times,
// links), reports monotonic progress ending at the totals, has the same
// usage, and leaves the source as it was.
func testClone(t *testing.T, h Harness) {
	src := cloneSource(t, h)
	cloneAndCompare(t, h, src, vfstorage.Ref{Host: h.Host, ID: uuid.Must(uuid.NewV7())})
}

// testCloneAcrossHosts: a clone may land on another host.
func testCloneAcrossHosts(t *testing.T, h Harness) {
	if h.OtherHost == "" {
		t.Fatal("the harness has no OtherHost")
	}
	src := cloneSource(t, h)
	cloneAndCompare(t, h, src, vfstorage.Ref{Host: h.OtherHost, ID: uuid.Must(uuid.NewV7())})
}

func cloneAndCompare(t *testing.T, h Harness, src, dst vfstorage.Ref) {
	t.Helper()
	before := tree(t, mountDir(t, h, src))
	srcUsage := wantUsage(t, h, src)
	var reports []vfstorage.CloneProgress
	if err := h.Storage.CloneFolder(t.Context(), src, dst, func(p vfstorage.CloneProgress) { reports = append(reports, p) }); err != nil {
		t.Fatalf("CloneFolder: %v", err)
	}
	if got := tree(t, mountDir(t, h, dst)); !slices.Equal(got, before) {
		t.Fatalf("clone:\n%v\nwant:\n%v", got, before)
	}
	if after := tree(t, mountDir(t, h, src)); !slices.Equal(after, before) {
		t.Fatalf("the source changed:\n%v\nwas:\n%v", after, before)
	}
	if u := wantUsage(t, h, dst); u != srcUsage {
		t.Fatalf("clone usage %+v, source %+v", u, srcUsage)
	}
	if len(reports) < 2 {
		t.Fatalf("%d progress reports", len(reports))
	}
	for i, p := range reports {
		if p.BytesTotal != srcUsage.Bytes || p.FilesTotal != srcUsage.Files {
			t.Fatalf("report %d totals %+v, want %+v", i, p, srcUsage)
		}
		if i > 0 && (p.BytesDone < reports[i-1].BytesDone || p.FilesDone < reports[i-1].FilesDone) {
			t.Fatalf("progress went back: %+v after %+v", p, reports[i-1])
		}
	}
	if last := reports[len(reports)-1]; last.BytesDone != srcUsage.Bytes || last.FilesDone != srcUsage.Files {
		t.Fatalf("last report %+v, want done = totals %+v", last, srcUsage)
	}
	// The clone is a folder of its own.
	upload(t, h, dst, "dir/small", []byte("changed"))
	if got := download(t, h, src, "dir/small"); string(got) == "changed" {
		t.Fatal("writing the clone changed the source")
	}
}

// testCloneToExisting: the destination must be new; nothing of it changes.
func testCloneToExisting(t *testing.T, h Harness) {
	src := cloneSource(t, h)
	dst := newFolder(t, h)
	upload(t, h, dst, "mine", []byte("mine"))
	err := h.Storage.CloneFolder(t.Context(), src, dst, nil)
	wantErr(t, "clone onto an existing folder", err, domain.KindConflict, vfstorage.ErrExists)
	if got := tree(t, mountDir(t, h, dst)); len(got) != 2 { // "." and mine
		t.Fatalf("destination changed: %v", got)
	}
	err = h.Storage.CloneFolder(t.Context(), src, src, nil)
	wantErr(t, "clone onto itself", err, domain.KindConflict, vfstorage.ErrExists)
}

// testCloneCancelled: a clone whose context ends leaves no destination,
// and can be started again.
func testCloneCancelled(t *testing.T, h Harness) {
	src := cloneSource(t, h)
	dst := vfstorage.Ref{Host: h.Host, ID: uuid.Must(uuid.NewV7())}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := h.Storage.CloneFolder(ctx, src, dst, func(p vfstorage.CloneProgress) {
		if p.FilesDone >= 2 {
			cancel()
		}
	})
	wantErr(t, "cancelled clone", err, domain.KindUnavailable, context.Canceled)
	_, err = h.Storage.MountSource(dst)
	wantErr(t, "destination of a cancelled clone", err, domain.KindNotFound, vfstorage.ErrNoFolder)
	cloneAndCompare(t, h, src, dst)
}
