package storagetest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

var fileTests = []suiteTest{
	{"List", testList},
	{"ListPages", testListPages},
	{"ListErrors", testListErrors},
	{"Stat", testStat},
	{"Mkdir", testMkdir},
	{"Remove", testRemove},
	{"Rename", testRename},
	{"Download", testDownload},
	{"DownloadOnlyRegularFiles", testDownloadOnlyRegular},
	{"UsageFollowsWrites", testUsageFollowsWrites},
	{"UsageHardLinks", testUsageHardLinks},
}

// testList: a listing reports each entry's name, type, size and mode in
// name order, and hides the staging directory at the root only.
func testList(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	mkdir(t, h, ref, "d/"+vfstorage.ReservedName)
	upload(t, h, ref, "b.txt", pattern(1, 123))
	upload(t, h, ref, "a.bin", nil)
	dir := mountDir(t, h, ref)
	if err := os.Symlink("b.txt", filepath.Join(dir, "c-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "a.bin"), 0o600); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	// An upload made the staging directory; it must not show.
	if _, err := os.Stat(filepath.Join(dir, vfstorage.ReservedName)); err != nil {
		t.Fatalf("no staging directory after an upload: %v", err)
	}
	l, err := h.Storage.ListFiles(t.Context(), ref, "", vfstorage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name string
		typ  vfstorage.FileType
		size int64
		mode os.FileMode
	}
	var got []row
	for _, e := range l.Entries {
		r := row{e.Name, e.Type, e.Size, e.Mode}
		if e.Type != vfstorage.TypeFile {
			r.size, r.mode = 0, 0
		}
		got = append(got, r)
		if e.ModTime.IsZero() {
			t.Errorf("%s: no modification time", e.Name)
		}
	}
	want := []row{
		{"a.bin", vfstorage.TypeFile, 0, 0o600},
		{"b.txt", vfstorage.TypeFile, 123, 0o644},
		{"c-link", vfstorage.TypeSymlink, 0, 0},
		{"d", vfstorage.TypeDir, 0, 0},
	}
	if !slices.Equal(got, want) || l.Next != "" {
		t.Fatalf("ListFiles = %+v next %q, want %+v", got, l.Next, want)
	}
	// Below the root the reserved name is an ordinary name.
	l, err = h.Storage.ListFiles(t.Context(), ref, "./d/", vfstorage.ListOptions{})
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Name != vfstorage.ReservedName {
		t.Fatalf("ListFiles(d) = %+v, %v", l, err)
	}
}

// testListPages: pages of every size cover a directory exactly once, in
// order, and a page may start after a name that no longer exists.
func testListPages(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	var names []string
	for i := range 57 {
		name := fmt.Sprintf("f%03d", i)
		names = append(names, name)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sessionWrote(t, h, ref)
	for _, limit := range []int{1, 2, 10, 56, 57, 58, vfstorage.MaxListLimit} {
		var got []string
		opts := vfstorage.ListOptions{Limit: limit}
		for pages := 0; ; pages++ {
			l, err := h.Storage.ListFiles(t.Context(), ref, ".", opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Entries) > limit || pages > len(names) {
				t.Fatalf("limit %d: page of %d", limit, len(l.Entries))
			}
			for _, e := range l.Entries {
				got = append(got, e.Name)
			}
			if l.Next == "" {
				break
			}
			opts.After = l.Next
		}
		if !slices.Equal(got, names) {
			t.Fatalf("limit %d: listed %v", limit, got)
		}
	}
	l, err := h.Storage.ListFiles(t.Context(), ref, ".", vfstorage.ListOptions{After: "f010x", Limit: 2})
	if err != nil || len(l.Entries) != 2 || l.Entries[0].Name != "f011" || l.Next != "f012" {
		t.Fatalf("after a missing name: %+v, %v", l, err)
	}
}

func testListErrors(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "file", []byte("x"))
	ctx := t.Context()
	_, err := h.Storage.ListFiles(ctx, ref, "missing", vfstorage.ListOptions{})
	wantErr(t, "missing directory", err, domain.KindNotFound, vfstorage.ErrNotFound)
	_, err = h.Storage.ListFiles(ctx, ref, "file", vfstorage.ListOptions{})
	wantErr(t, "a file", err, domain.KindConflict, vfstorage.ErrNotDir)
	_, err = h.Storage.ListFiles(ctx, ref, "file/x", vfstorage.ListOptions{})
	wantErr(t, "below a file", err, domain.KindConflict, vfstorage.ErrNotDir)
	for _, limit := range []int{-1, vfstorage.MaxListLimit + 1} {
		_, err = h.Storage.ListFiles(ctx, ref, ".", vfstorage.ListOptions{Limit: limit})
		wantErr(t, fmt.Sprint("limit ", limit), err, domain.KindInvalid, vfstorage.ErrInvalid)
	}
	for _, after := range []string{"a/b", "..", "/x", "x\x00"} {
		_, err = h.Storage.ListFiles(ctx, ref, ".", vfstorage.ListOptions{After: after})
		wantErr(t, "after "+after, err, domain.KindInvalid, vfstorage.ErrInvalidPath)
	}
}

func testStat(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "f", pattern(1, 42))
	mkdir(t, h, ref, "d")
	if err := os.Symlink("f", filepath.Join(mountDir(t, h, ref), "l")); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	for _, tt := range []struct {
		path string
		want vfstorage.FileInfo
	}{
		{"f", vfstorage.FileInfo{Name: "f", Type: vfstorage.TypeFile, Size: 42, Mode: 0o644}},
		{"d", vfstorage.FileInfo{Name: "d", Type: vfstorage.TypeDir}},
		{"./d/", vfstorage.FileInfo{Name: "d", Type: vfstorage.TypeDir}},
		{"l", vfstorage.FileInfo{Name: "l", Type: vfstorage.TypeSymlink}},
		{"", vfstorage.FileInfo{Type: vfstorage.TypeDir}},
	} {
		fi, err := h.Storage.Stat(t.Context(), ref, tt.path)
		if err != nil {
			t.Fatalf("Stat(%q): %v", tt.path, err)
		}
		if tt.want.Type != vfstorage.TypeFile {
			fi.Size, fi.Mode = 0, 0
		}
		if tt.path == "" {
			fi.Name = ""
		}
		fi.ModTime = tt.want.ModTime
		if fi != tt.want {
			t.Errorf("Stat(%q) = %+v, want %+v", tt.path, fi, tt.want)
		}
	}
	_, err := h.Storage.Stat(t.Context(), ref, "nope")
	wantErr(t, "Stat of a missing file", err, domain.KindNotFound, vfstorage.ErrNotFound)
}

func testMkdir(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	ctx := t.Context()
	s := h.Storage
	upload(t, h, ref, "file", nil)
	if err := s.Mkdir(ctx, ref, "a", false); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "existing", s.Mkdir(ctx, ref, "a", false), domain.KindConflict, vfstorage.ErrExists)
	wantErr(t, "missing parent", s.Mkdir(ctx, ref, "x/y", false), domain.KindNotFound, vfstorage.ErrNotFound)
	wantErr(t, "root", s.Mkdir(ctx, ref, ".", false), domain.KindConflict, vfstorage.ErrExists)
	if err := s.Mkdir(ctx, ref, "a/b/c/d", true); err != nil {
		t.Fatal(err)
	}
	if err := s.Mkdir(ctx, ref, "a/b", true); err != nil {
		t.Fatalf("parents on an existing directory: %v", err)
	}
	if err := s.Mkdir(ctx, ref, ".", true); err != nil {
		t.Fatalf("parents on the root: %v", err)
	}
	wantErr(t, "parents through a file", s.Mkdir(ctx, ref, "file/x", true), domain.KindConflict, vfstorage.ErrNotDir)
	wantErr(t, "parents onto a file", s.Mkdir(ctx, ref, "file", true), domain.KindConflict, vfstorage.ErrExists)
	if fi, err := s.Stat(ctx, ref, "a/b/c/d"); err != nil || fi.Type != vfstorage.TypeDir {
		t.Fatalf("Stat = %+v, %v", fi, err)
	}
	if u := wantUsage(t, h, ref); u.Files != 5 {
		t.Fatalf("usage %+v, want 5 entries", u)
	}
}

func testRemove(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	ctx := t.Context()
	s := h.Storage
	mkdir(t, h, ref, "full/sub")
	mkdir(t, h, ref, "empty")
	upload(t, h, ref, "full/sub/f", pattern(1, 500))
	upload(t, h, ref, "target", pattern(2, 50))
	if err := os.Symlink("target", filepath.Join(mountDir(t, h, ref), "link")); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	wantErr(t, "non-empty without recursive", s.Remove(ctx, ref, "full", false), domain.KindConflict, vfstorage.ErrNotEmpty)
	wantErr(t, "root", s.Remove(ctx, ref, "", true), domain.KindInvalid, vfstorage.ErrInvalidPath)
	wantErr(t, "missing", s.Remove(ctx, ref, "nope", false), domain.KindNotFound, vfstorage.ErrNotFound)
	for _, p := range []string{"empty", "link"} {
		if err := s.Remove(ctx, ref, p, false); err != nil {
			t.Fatalf("Remove(%q): %v", p, err)
		}
	}
	if got := download(t, h, ref, "target"); len(got) != 50 {
		t.Fatal("removing a link touched its target")
	}
	wantUsage(t, h, ref)
	if err := s.Remove(ctx, ref, "full", true); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, ref, "target", true); err != nil {
		t.Fatalf("recursive on a file: %v", err)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{}) {
		t.Fatalf("usage after removing everything: %+v", u)
	}
}

func testRename(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	ctx := t.Context()
	s := h.Storage
	mkdir(t, h, ref, "d/sub")
	upload(t, h, ref, "d/sub/f", pattern(1, 10))
	upload(t, h, ref, "g", pattern(2, 20))
	if err := s.Rename(ctx, ref, "g", "d/g2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, ref, "d", "e"); err != nil {
		t.Fatal(err)
	}
	if got := download(t, h, ref, "e/sub/f"); len(got) != 10 {
		t.Fatal("the moved tree lost a file")
	}
	if got := download(t, h, ref, "e/g2"); len(got) != 20 {
		t.Fatal("the moved file changed")
	}
	upload(t, h, ref, "h", nil)
	wantErr(t, "onto an existing file", s.Rename(ctx, ref, "h", "e/g2"), domain.KindConflict, vfstorage.ErrExists)
	wantErr(t, "onto an existing dir", s.Rename(ctx, ref, "h", "e"), domain.KindConflict, vfstorage.ErrExists)
	wantErr(t, "into itself", s.Rename(ctx, ref, "e", "e/sub/e"), domain.KindInvalid, vfstorage.ErrInvalidPath)
	wantErr(t, "missing source", s.Rename(ctx, ref, "nope", "x"), domain.KindNotFound, vfstorage.ErrNotFound)
	wantErr(t, "missing parent", s.Rename(ctx, ref, "h", "no/x"), domain.KindNotFound, vfstorage.ErrNotFound)
	wantErr(t, "the root", s.Rename(ctx, ref, ".", "x"), domain.KindInvalid, vfstorage.ErrInvalidPath)
	wantErr(t, "onto the root", s.Rename(ctx, ref, "h", ""), domain.KindInvalid, vfstorage.ErrInvalidPath)
	wantUsage(t, h, ref)
}

// testDownload: the reader seeks and reads at offsets (HTTP Range).
func testDownload(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	data := pattern(7, 100_000)
	upload(t, h, ref, "f", data)
	r, fi, err := h.Storage.Download(t.Context(), ref, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if fi.Size != int64(len(data)) || fi.Name != "f" || fi.Type != vfstorage.TypeFile {
		t.Fatalf("info %+v", fi)
	}
	if _, err := r.Seek(90_000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || !slices.Equal(rest, data[90_000:]) {
		t.Fatalf("after Seek: %d bytes, %v", len(rest), err)
	}
	buf := make([]byte, 10)
	if _, err := r.ReadAt(buf, 1234); err != nil || !slices.Equal(buf, data[1234:1244]) {
		t.Fatalf("ReadAt: %v", err)
	}
	_, _, err = h.Storage.Download(t.Context(), ref, "nope")
	wantErr(t, "missing", err, domain.KindNotFound, vfstorage.ErrNotFound)
}

// testDownloadOnlyRegular: directories, FIFOs (which would block) and
// device nodes are refused; a link to a file inside the folder is read.
func testDownloadOnlyRegular(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	mkdir(t, h, ref, "d")
	upload(t, h, ref, "d/f", []byte("through a link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "fifo-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/f", filepath.Join(dir, "f-link")); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	for _, p := range []string{"fifo", "fifo-link"} {
		_, _, err := h.Storage.Download(t.Context(), ref, p)
		wantErr(t, p, err, domain.KindConflict, vfstorage.ErrNotRegular)
	}
	for _, p := range []string{"d", ""} {
		_, _, err := h.Storage.Download(t.Context(), ref, p)
		wantErr(t, p, err, domain.KindConflict, vfstorage.ErrIsDir)
	}
	if got := download(t, h, ref, "f-link"); string(got) != "through a link" {
		t.Fatalf("through a link: %q", got)
	}
}

// testUsageFollowsWrites: usage, as cached by the backend, matches a
// measurement of the directory after every kind of write.
func testUsageFollowsWrites(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	ctx := t.Context()
	s := h.Storage
	steps := []struct {
		name string
		do   func() error
	}{
		{"mkdir", func() error { return s.Mkdir(ctx, ref, "a/b/c", true) }},
		{"upload", func() error {
			_, err := s.Upload(ctx, ref, "a/f", bytesReader("12345"), vfstorage.UploadOptions{})
			return err
		}},
		{"upload bigger", func() error {
			_, err := s.Upload(ctx, ref, "a/b/g", bytesReader(string(pattern(1, 70_000))), vfstorage.UploadOptions{})
			return err
		}},
		{"replace smaller", func() error {
			_, err := s.Upload(ctx, ref, "a/b/g", bytesReader("xy"), vfstorage.UploadOptions{})
			return err
		}},
		{"rename", func() error { return s.Rename(ctx, ref, "a/f", "a/b/c/f") }},
		{"remove file", func() error { return s.Remove(ctx, ref, "a/b/g", false) }},
		{"upload again", func() error {
			_, err := s.Upload(ctx, ref, "top", bytesReader("top"), vfstorage.UploadOptions{})
			return err
		}},
		{"remove tree", func() error { return s.Remove(ctx, ref, "a", true) }},
	}
	wantUsage(t, h, ref) // cache it first, so that every step updates it
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, err := s.Usage(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if want := measure(t, mountDir(t, h, ref)); got != want {
			t.Fatalf("after %s: Usage = %+v, measured %+v", st.name, got, want)
		}
	}
}

// testUsageHardLinks: a file with several links in the folder counts once,
// and writes to such files keep the usage right.
func testUsageHardLinks(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	ctx := t.Context()
	upload(t, h, ref, "a", pattern(1, 100))
	dir := mountDir(t, h, ref)
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: 100, Files: 2}) {
		t.Fatalf("usage %+v", u)
	}
	upload(t, h, ref, "b", pattern(2, 10)) // replaces the link, a keeps its bytes
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: 110, Files: 2}) {
		t.Fatalf("after replacing a link: %+v", u)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	sessionWrote(t, h, ref)
	if err := h.Storage.Remove(ctx, ref, "a", false); err != nil {
		t.Fatal(err)
	}
	if u := wantUsage(t, h, ref); u != (vfstorage.Usage{Bytes: 110, Files: 2}) {
		t.Fatalf("after removing one of two links: %+v", u)
	}
}
