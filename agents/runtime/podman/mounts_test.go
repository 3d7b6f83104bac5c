package podman

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
)

// A read-only vfolder cannot be written; a read-write one can.
func TestMounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ro, rw := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "given"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The refused write's error goes to /dev/null: sh writes it to stderr
	// in pieces, which may interleave with the next line on stdout.
	spec := h.spec("sh", "-c", `cat /home/work/ro/given
if { echo x > /home/work/ro/new; } 2>/dev/null; then echo ro-written; else echo ro-refused; fi
if echo y > /home/work/rw/new; then echo rw-written; else echo rw-refused; fi`)
	spec.Mounts = []runtime.Mount{
		{Source: ro, Target: "/home/work/ro", ReadOnly: true},
		{Source: rw, Target: "/home/work/rw"},
	}
	c := h.run(spec)
	if code, err := h.rt.Wait(h.ctx, c.ID); err != nil || code != 0 {
		t.Fatalf("wait = %d, %v", code, err)
	}
	logs, err := h.rt.Logs(h.ctx, c.ID, runtime.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"data", "ro-refused", "rw-written"} {
		if !containsLine(string(logs), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if _, err := os.Stat(filepath.Join(ro, "new")); !os.IsNotExist(err) {
		t.Errorf("the read-only folder was written: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "new")); err != nil || string(b) != "y\n" {
		t.Errorf("the read-write folder holds %q, %v; want y", b, err)
	}
}
