// Package tmpfstest gives tests a small file system of their own that
// they can fill up: a tmpfs mounted for the test (root only), and a
// ballast file that takes every byte left on it. Tests of how Cairn
// behaves on a full disk use it.
package tmpfstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (e.g. "32m") on a fresh directory until the
// test ends, and returns the directory. Mounting needs root: CI runs the
// tests as root, and with CI=true a run as another user fails; otherwise
// the test is skipped, loudly.
func Mount(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		msg := fmt.Sprintf("%s NOT RUN: mounting a tmpfs needs root (CI runs the tests as root)", t.Name())
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		// Listed at the end of `make test` (scripts/test.sh), as pgtest does.
		if path := os.Getenv("CAIRN_TEST_SKIP_REPORT"); path != "" {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, msg)
				f.Close()
			}
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a ballast file in dir until its file system has no room
// left (ENOSPC), and returns the file's path: removing it makes the room
// again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, 4096, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return path
}
