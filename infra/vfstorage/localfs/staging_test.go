package localfs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// TestAbandonedStagingSwept: a usage walk removes staging files older than
// StagingMaxAge (an upload whose process died) and keeps younger ones (an
// upload in progress).
func TestAbandonedStagingSwept(t *testing.T) {
	s := openTest(t, Config{Hosts: Hosts{{"a", t.TempDir()}}, StagingMaxAge: time.Hour})
	ref := vfstorage.Ref{Host: "a", ID: uuid.Must(uuid.NewV7())}
	if err := s.CreateFolder(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	dir, err := s.MountSource(ref)
	if err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(dir, vfstorage.ReservedName)
	if err := os.Mkdir(staging, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, age := range map[string]time.Duration{"dead.part": 2 * time.Hour, "alive.part": 10 * time.Minute} {
		p := filepath.Join(staging, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		mtime := time.Now().Add(-age)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	u, err := s.RefreshUsage(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if u != (vfstorage.Usage{}) {
		t.Fatalf("staging files counted in usage: %+v", u)
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"alive.part"}) {
		t.Fatalf("left in staging: %v", left)
	}
}

// TestFolderLayout: a folder lives under the fan-out directory named by
// the last two hex digits of its id.
func TestFolderLayout(t *testing.T) {
	host := t.TempDir()
	s := openTest(t, Config{Hosts: Hosts{{"a", host}}})
	id := uuid.MustParse("0190c1a2-7c4e-7d3a-b1e2-a1b2c3d4e53f")
	ref := vfstorage.Ref{Host: "a", ID: id}
	if err := s.CreateFolder(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	got, err := s.MountSource(ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(host, "3f", id.String()); got != want {
		t.Fatalf("MountSource = %s, want %s", got, want)
	}
	if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", got, err)
	}
}
