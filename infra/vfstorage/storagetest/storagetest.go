// Package storagetest is the conformance suite every vfstorage.Storage
// backend must pass. A backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storagetest.Harness {
//			s := openStorage(t, "a:"+t.TempDir(), "b:"+t.TempDir())
//			return storagetest.Harness{Storage: s, Host: "a", OtherHost: "b"}
//		})
//	}
//
// Every call of the factory returns a fresh storage, closed at t.Cleanup.
// The suite plants what only a session could make (symbolic links out of
// the folder, FIFOs, hard links) through the folder's MountSource
// directory, so it expects a backend whose folders are directories on this
// machine's file system. Subtests run in parallel, grouped by area:
// Folders, Files, Upload, Traversal, Resumable.
package storagetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Harness is one storage under test.
type Harness struct {
	Storage vfstorage.Storage
	// Host is the host the suite makes its folders on.
	Host string
	// OtherHost, if set, is a second host, for cloning across hosts.
	OtherHost string
}

type suiteTest struct {
	name string
	run  func(t *testing.T, h Harness)
}

// Run runs the conformance suite.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	groups := []struct {
		name  string
		tests []suiteTest
	}{
		{"Folders", folderTests},
		{"Files", fileTests},
		{"Upload", uploadTests},
		{"Traversal", traversalTests},
		{"Resumable", resumableTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					t.Parallel()
					st.run(t, newHarness(t))
				})
			}
		})
	}
}

// newFolder creates an empty folder on h.Host.
func newFolder(t *testing.T, h Harness) vfstorage.Ref {
	t.Helper()
	ref := vfstorage.Ref{Host: h.Host, ID: uuid.Must(uuid.NewV7())}
	if err := h.Storage.CreateFolder(t.Context(), ref); err != nil {
		t.Fatalf("CreateFolder: %v", err)
	}
	return ref
}

// sessionWrote tells the backend that a session changed the folder behind
// its back (the suite plants links, FIFOs and files through MountSource),
// as the agent does when a session that mounted the folder ends.
func sessionWrote(t *testing.T, h Harness, ref vfstorage.Ref) {
	t.Helper()
	if _, err := h.Storage.RefreshUsage(t.Context(), ref); err != nil {
		t.Fatalf("RefreshUsage: %v", err)
	}
}

// mountDir is the folder's directory, for planting what sessions make.
func mountDir(t *testing.T, h Harness, ref vfstorage.Ref) string {
	t.Helper()
	dir, err := h.Storage.MountSource(ref)
	if err != nil {
		t.Fatalf("MountSource: %v", err)
	}
	return dir
}

func upload(t *testing.T, h Harness, ref vfstorage.Ref, p string, data []byte) vfstorage.FileInfo {
	t.Helper()
	fi, err := h.Storage.Upload(t.Context(), ref, p, bytes.NewReader(data), vfstorage.UploadOptions{})
	if err != nil {
		t.Fatalf("Upload(%q): %v", p, err)
	}
	return fi
}

func mkdir(t *testing.T, h Harness, ref vfstorage.Ref, p string) {
	t.Helper()
	if err := h.Storage.Mkdir(t.Context(), ref, p, true); err != nil {
		t.Fatalf("Mkdir(%q): %v", p, err)
	}
}

func download(t *testing.T, h Harness, ref vfstorage.Ref, p string) []byte {
	t.Helper()
	r, _, err := h.Storage.Download(t.Context(), ref, p)
	if err != nil {
		t.Fatalf("Download(%q): %v", p, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", p, err)
	}
	return b
}

// wantErr fails unless err is a *domain.Error of kind whose chain holds
// reason.
func wantErr(t *testing.T, what string, err error, kind domain.Kind, reason error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %v (%v)", what, kind, reason)
	}
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("%s: %T %v is not a *domain.Error", what, err, err)
	}
	if domain.KindOf(err) != kind || !errors.Is(err, reason) {
		t.Fatalf("%s: got %v (kind %v), want kind %v and reason %q", what, err, domain.KindOf(err), kind, reason)
	}
}

// pattern is size bytes that differ from the bytes of another seed.
func pattern(seed byte, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = seed + byte(i%251)
	}
	return b
}

// measure computes a folder's usage independently of the backend: every
// entry under dir but the staging directory, regular files' sizes (once
// per inode).
func measure(t *testing.T, dir string) vfstorage.Usage {
	t.Helper()
	var u vfstorage.Usage
	inodes := make(map[uint64]bool)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
			return nil
		case rel == vfstorage.ReservedName:
			return fs.SkipDir
		}
		u.Files++
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				if inodes[st.Ino] {
					return nil
				}
				inodes[st.Ino] = true
			}
			u.Bytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func wantUsage(t *testing.T, h Harness, ref vfstorage.Ref) vfstorage.Usage {
	t.Helper()
	got, err := h.Storage.Usage(t.Context(), ref)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if want := measure(t, mountDir(t, h, ref)); got != want {
		t.Fatalf("Usage = %+v, want %+v (measured)", got, want)
	}
	return got
}

// staged lists what is left in the folder's staging directory.
func staged(t *testing.T, h Harness, ref vfstorage.Ref) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(mountDir(t, h, ref), vfstorage.ReservedName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// tree describes every entry under dir: "path type size content-prefix".
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == vfstorage.ReservedName {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := rel + " " + fi.Mode().String()
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %d %x %s", len(b), sha256.Sum256(b), fi.ModTime().UTC())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func ctxCancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

func bytesReader(s string) io.Reader { return strings.NewReader(s) }
