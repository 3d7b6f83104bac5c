package storagetest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

var traversalTests = []suiteTest{
	{"BadPaths", testBadPaths},
	{"SymlinksOut", testSymlinksOut},
	{"SymlinksInside", testSymlinksInside},
	{"StagingHijack", testStagingHijack},
	{"SymlinkRace", testSymlinkRace},
}

// pathOps runs every operation that takes a path with p in that place,
// each returning its error.
func pathOps(h Harness, t *testing.T, ref vfstorage.Ref, p string) map[string]error {
	ctx := t.Context()
	s := h.Storage
	_, listErr := s.ListFiles(ctx, ref, p, vfstorage.ListOptions{})
	_, statErr := s.Stat(ctx, ref, p)
	_, upErr := s.Upload(ctx, ref, p, bytesReader("pwned"), vfstorage.UploadOptions{})
	r, _, dlErr := s.Download(ctx, ref, p)
	if r != nil {
		r.Close()
	}
	return map[string]error{
		"ListFiles":  listErr,
		"Stat":       statErr,
		"Mkdir":      s.Mkdir(ctx, ref, p, false),
		"MkdirAll":   s.Mkdir(ctx, ref, p, true),
		"Remove":     s.Remove(ctx, ref, p, false),
		"RemoveAll":  s.Remove(ctx, ref, p, true),
		"RenameFrom": s.Rename(ctx, ref, p, "renamed"),
		"RenameTo":   s.Rename(ctx, ref, "victim", p),
		"Upload":     upErr,
		"Download":   dlErr,
	}
}

// testBadPaths: paths that climb out, are absolute, hold NUL bytes or
// invalid UTF-8, or touch the reserved staging directory are refused by
// every operation before anything is done.
func testBadPaths(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	upload(t, h, ref, "victim", []byte("victim"))
	mkdir(t, h, ref, "a/b")
	outside := t.TempDir()
	for _, p := range []string{
		"..", "../", "../x", "a/../../x", "a/b/../../../x", "./../x", "a/..", "a/../b",
		"/etc/passwd", "/", "//x", "/" + filepath.Join(outside, "x"),
		"a\x00b", "x\x00/../../etc", "\xff\xfe", "a/\xc3",
		vfstorage.ReservedName, vfstorage.ReservedName + "/x", "./" + vfstorage.ReservedName + "/../x",
		strings.Repeat("n", 256), strings.Repeat("d/", 2048),
	} {
		for op, err := range pathOps(h, t, ref, p) {
			wantErr(t, fmt.Sprintf("%s(%q)", op, p), err, domain.KindInvalid, vfstorage.ErrInvalidPath)
		}
	}
	if got := download(t, h, ref, "victim"); string(got) != "victim" {
		t.Fatalf("victim = %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("written outside: %v", entries)
	}
	wantUsage(t, h, ref)
}

// testSymlinksOut: symbolic links a session made that lead out of the
// folder — absolute or relative, to a directory or a file, into another
// folder of the same host, through a chain of links — are refused by every
// operation that would follow them, and nothing outside is read or written.
// The links themselves may be listed, stat'ed and removed.
func testSymlinksOut(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	other := newFolder(t, h)
	upload(t, h, ref, "victim", []byte("victim"))
	upload(t, h, other, "secret", []byte("other folder's secret"))
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := mountDir(t, h, ref)
	otherRel, err := filepath.Rel(dir, mountDir(t, h, other))
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"etc":         "/etc",
		"passwd":      "/etc/passwd",
		"out":         outside,
		"out-secret":  filepath.Join(outside, "secret"),
		"up":          "..",
		"up3":         "../../..",
		"neighbour":   otherRel,
		"nb-secret":   filepath.Join(otherRel, "secret"),
		"chain":       "etc",
		"deep/inside": "../../..",
	}
	mkdir(t, h, ref, "deep")
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sessionWrote(t, h, ref)
	before := tree(t, outside)
	otherBefore := tree(t, mountDir(t, h, other))
	for name := range links {
		for _, p := range []string{name + "/secret", name + "/passwd", name + "/new/x"} {
			for op, err := range pathOps(h, t, ref, p) {
				wantErr(t, fmt.Sprintf("%s(%q)", op, p), err, domain.KindInvalid, vfstorage.ErrInvalidPath)
			}
		}
		// Following the link itself (a file or a directory out there).
		_, _, err := h.Storage.Download(t.Context(), ref, name)
		wantErr(t, "Download("+name+")", err, domain.KindInvalid, vfstorage.ErrInvalidPath)
		_, err = h.Storage.ListFiles(t.Context(), ref, name, vfstorage.ListOptions{})
		wantErr(t, "ListFiles("+name+")", err, domain.KindInvalid, vfstorage.ErrInvalidPath)
		_, err = h.Storage.Upload(t.Context(), ref, name+"/f", bytesReader("pwned"), vfstorage.UploadOptions{})
		wantErr(t, "Upload("+name+"/f)", err, domain.KindInvalid, vfstorage.ErrInvalidPath)
	}
	// Reading through them never returned outside data: the downloads all
	// failed above. Nothing outside changed:
	if after := tree(t, outside); !slices.Equal(after, before) {
		t.Fatalf("outside changed:\n%v\nwas\n%v", after, before)
	}
	if after := tree(t, mountDir(t, h, other)); !slices.Equal(after, otherBefore) {
		t.Fatalf("the neighbour folder changed:\n%v\nwas\n%v", after, otherBefore)
	}
	// The links are entries of the folder like any other.
	l, err := h.Storage.ListFiles(t.Context(), ref, ".", vfstorage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if _, isLink := links[e.Name]; isLink && e.Type != vfstorage.TypeSymlink {
			t.Errorf("%s listed as %s", e.Name, e.Type)
		}
	}
	if fi, err := h.Storage.Stat(t.Context(), ref, "etc"); err != nil || fi.Type != vfstorage.TypeSymlink {
		t.Fatalf("Stat(etc) = %+v, %v", fi, err)
	}
	if err := h.Storage.Rename(t.Context(), ref, "out", "out-renamed"); err != nil {
		t.Fatalf("renaming a link: %v", err)
	}
	for _, name := range []string{"etc", "out-renamed", "neighbour"} {
		if err := h.Storage.Remove(t.Context(), ref, name, true); err != nil {
			t.Fatalf("removing the link %s: %v", name, err)
		}
	}
	if after := tree(t, outside); !slices.Equal(after, before) {
		t.Fatalf("removing links changed their targets:\n%v", after)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("/etc/passwd: %v", err)
	}
	if after := tree(t, mountDir(t, h, other)); !slices.Equal(after, otherBefore) {
		t.Fatal("removing a link changed the neighbour folder")
	}
	// Usage does not follow links out either.
	if u := wantUsage(t, h, ref); u.Bytes != int64(len("victim")) {
		t.Fatalf("usage %+v counted bytes outside", u)
	}
}

// testSymlinksInside: links that stay inside the folder are followed.
func testSymlinksInside(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	mkdir(t, h, ref, "real/sub")
	dir := mountDir(t, h, ref)
	for name, target := range map[string]string{
		"alias":         "real",
		"real/sub/back": "../..", // the folder's root, from inside
		"abs-ish":       "./real/sub",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sessionWrote(t, h, ref)
	upload(t, h, ref, "alias/f", []byte("via alias"))
	if got := download(t, h, ref, "real/f"); string(got) != "via alias" {
		t.Fatalf("real/f = %q", got)
	}
	if got := download(t, h, ref, "real/sub/back/real/f"); string(got) != "via alias" {
		t.Fatalf("through back: %q", got)
	}
	mkdir(t, h, ref, "abs-ish/made")
	if fi, err := os.Stat(filepath.Join(dir, "real/sub/made")); err != nil || !fi.IsDir() {
		t.Fatalf("mkdir through a link: %v", err)
	}
	l, err := h.Storage.ListFiles(t.Context(), ref, "alias", vfstorage.ListOptions{})
	if err != nil || len(l.Entries) != 2 {
		t.Fatalf("ListFiles(alias) = %+v, %v", l, err)
	}
	// Usage counts what is there once: links are entries, not followed.
	wantUsage(t, h, ref)
}

// testStagingHijack: a session that replaces the staging directory with a
// link out of the folder (or a file) cannot make an upload write there.
func testStagingHijack(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	outside := t.TempDir()
	staging := filepath.Join(dir, vfstorage.ReservedName)
	if err := os.Symlink(outside, staging); err != nil {
		t.Fatal(err)
	}
	upload(t, h, ref, "f", []byte("data"))
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("staged outside the folder: %v", entries)
	}
	if err := os.RemoveAll(staging); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(staging, []byte("squatter"), 0o644); err != nil {
		t.Fatal(err)
	}
	upload(t, h, ref, "g", []byte("data"))
	if got := download(t, h, ref, "g"); string(got) != "data" {
		t.Fatalf("g = %q", got)
	}
}

// testSymlinkRace: while a session keeps swapping a directory of the
// folder with a link out of it, uploads, downloads, listings and mkdirs
// through that name never reach outside.
func testSymlinkRace(t *testing.T, h Harness) {
	ref := newFolder(t, h)
	dir := mountDir(t, h, ref)
	outside := t.TempDir()
	secret := []byte("outside secret")
	if err := os.WriteFile(filepath.Join(outside, "secret"), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir(t, h, ref, "flip")
	upload(t, h, ref, "flip/secret", []byte("inside"))
	before := tree(t, outside)

	var stop atomic.Bool
	var session sync.WaitGroup
	var flips atomic.Int64
	session.Go(func() {
		real, link := filepath.Join(dir, "flip"), filepath.Join(dir, "flip-link")
		parked := filepath.Join(dir, "flip-parked")
		for !stop.Load() {
			// flip is a directory, then a link out, then a directory again.
			// The API may make flip again while it is away (Mkdir with
			// parents): then the round starts over.
			_ = os.Rename(real, parked)
			_ = os.Remove(link)
			if err := os.Symlink(outside, link); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(link, real); err != nil {
				_ = os.RemoveAll(real) // a directory the API made; never follows a link
				continue
			}
			flips.Add(1)
			_ = os.Remove(real)
			_ = os.Rename(parked, real)
		}
	})
	var leaks atomic.Int64
	var api sync.WaitGroup
	for range 2 {
		api.Go(func() {
			for i := range 300 {
				name := fmt.Sprintf("flip/up%d", i%7)
				_, _ = h.Storage.Upload(t.Context(), ref, name, bytesReader("pwned"), vfstorage.UploadOptions{})
				_ = h.Storage.Mkdir(t.Context(), ref, "flip/newdir", true)
				_, _ = h.Storage.ListFiles(t.Context(), ref, "flip", vfstorage.ListOptions{})
				if r, _, err := h.Storage.Download(t.Context(), ref, "flip/secret"); err == nil {
					b, _ := io.ReadAll(r)
					r.Close()
					if bytes.Equal(b, secret) {
						leaks.Add(1)
					}
				}
				_ = h.Storage.Remove(t.Context(), ref, "flip/newdir", true)
			}
		})
	}
	api.Wait()
	stop.Store(true)
	session.Wait()
	if flips.Load() == 0 {
		t.Fatal("the session never put the link in place")
	}
	if n := leaks.Load(); n > 0 {
		t.Fatalf("%d downloads read the file outside the folder", n)
	}
	if after := tree(t, outside); !slices.Equal(after, before) {
		t.Fatalf("outside changed:\n%v\nwas\n%v", after, before)
	}
}
