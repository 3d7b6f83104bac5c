package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
)

// claimMounts gives a read-write mount's entries that are not the
// kernel's to the kernel's root, keeps what the kernel's own users own,
// leaves read-only mounts alone, and never follows a link out of the
// folder.
func TestClaimMounts(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		// chown to other ids needs root; CI runs as root.
		if os.Getenv("CI") == "true" {
			t.Fatal("TestClaimMounts needs root")
		}
		t.Skip("TestClaimMounts NOT RUN: it needs root")
	}
	m := runtime.IDMap{HostID: 3_000_000, Size: 65536}
	rw, ro, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path string, uid, gid int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(path, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(rw, "uploaded"), 0, 0)                                      // by the file API, as root
	write(filepath.Join(rw, "sub", "deeper", "made"), 0, 0)                         // a folder the API made
	write(filepath.Join(rw, "kernel-user"), int(m.HostID)+1000, int(m.HostID)+1000) // the kernel's user 1000
	write(filepath.Join(rw, "mixed"), int(m.HostID)+5, 0)                           // only the group is foreign
	write(filepath.Join(outside, "secret"), 0, 0)
	write(filepath.Join(ro, "dataset"), 0, 0)
	if err := os.Symlink(outside, filepath.Join(rw, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(rw, "escape-file")); err != nil {
		t.Fatal(err)
	}

	n, err := claimMounts(context.Background(), []runtime.Mount{{Source: rw, Target: "/rw"}, {Source: ro, Target: "/ro", ReadOnly: true}}, m)
	if err != nil {
		t.Fatal(err)
	}
	owner := func(path string) (uint32, uint32) {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			t.Fatal(err)
		}
		return st.Uid, st.Gid
	}
	root, user := m.HostID, m.HostID+1000
	for path, want := range map[string][2]uint32{
		rw:                            {root, root},
		filepath.Join(rw, "uploaded"): {root, root},
		filepath.Join(rw, "sub"):      {root, root},
		filepath.Join(rw, "sub", "deeper", "made"): {root, root},
		filepath.Join(rw, "kernel-user"):           {user, user},
		filepath.Join(rw, "mixed"):                 {m.HostID + 5, root},
		filepath.Join(rw, "escape"):                {root, root}, // the link itself
		filepath.Join(rw, "escape-file"):           {root, root},
		outside:                                    {0, 0},
		filepath.Join(outside, "secret"):           {0, 0},
		filepath.Join(ro, "dataset"):               {0, 0},
		ro:                                         {0, 0},
	} {
		if uid, gid := owner(path); uid != want[0] || gid != want[1] {
			t.Errorf("%s is owned by %d:%d, want %d:%d", path, uid, gid, want[0], want[1])
		}
	}
	// rw, uploaded, sub, sub/deeper, made, mixed, escape, escape-file.
	if n != 8 {
		t.Errorf("claimed %d entries, want 8", n)
	}
	// Again: nothing left to change.
	if n, err := claimMounts(context.Background(), []runtime.Mount{{Source: rw, Target: "/rw"}}, m); err != nil || n != 0 {
		t.Errorf("second claim: %d entries, %v; want 0", n, err)
	}
	if _, err := claimMounts(context.Background(), []runtime.Mount{{Source: filepath.Join(rw, "missing"), Target: "/x"}}, m); err == nil {
		t.Error("a missing mount source was claimed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := claimMounts(ctx, []runtime.Mount{{Source: rw, Target: "/rw"}}, m); !errors.Is(err, context.Canceled) {
		t.Errorf("claim with an ended context: %v, want context.Canceled", err)
	}
}

// BenchmarkClaimMounts measures the walk over a folder the kernel already
// owns (the common case from the second session on: every entry stat'ed,
// none changed), per entry.
func BenchmarkClaimMounts(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	m := runtime.IDMap{HostID: 3_000_000, Size: 65536}
	dir := b.TempDir()
	const dirs, files = 100, 100
	for i := range dirs {
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range files {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprint(j)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	mounts := []runtime.Mount{{Source: dir, Target: "/rw"}}
	if _, err := claimMounts(context.Background(), mounts, m); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if n, err := claimMounts(context.Background(), mounts, m); err != nil || n != 0 {
			b.Fatalf("claimed %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(dirs*files+dirs+1), "ns/entry")
}
