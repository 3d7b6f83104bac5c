package node_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// With the default configuration a kernel runs as root in its own user
// namespace, holding only the minimal capabilities, and a read-write
// folder that the manager's file API filled (as host root) is the
// kernel's to write: the agent hands it over before the kernel starts.
// What the kernel writes is the mapped id's on the host, never root's.
func TestKernelIsolationByDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	a, _ := h.runAgent(cfg)
	h.register(0)

	folder := t.TempDir()
	if err := os.MkdirAll(filepath.Join(folder, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "uploaded"), []byte("from the API\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dataset := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataset, "given"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	create := h.create("sh", "-c", `id -u
grep ^CapEff /proc/self/status
echo more >> /home/work/data/uploaded && echo append-ok
echo new > /home/work/data/sub/new && echo sub-ok
cat /home/work/dataset/given`)
	create.Mounts = []protocol.Mount{
		{Source: folder, Target: "/home/work/data"},
		{Source: dataset, Target: "/home/work/dataset", ReadOnly: true},
	}
	h.send(create)
	if exited := h.status(0, create.KernelID, domain.PhaseExited); exited.ExitCode != 0 {
		t.Errorf("exit code = %d, want 0", exited.ExitCode)
	}
	logs, err := a.Logs(h.ctx, create.KernelID, runtime.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(logs), "\n")
	for _, want := range []string{"0", "CapEff:\t00000000000000eb", "append-ok", "sub-ok", "read me"} {
		if !slices.Contains(lines, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}

	m := runtime.DefaultIDMap
	for _, path := range []string{folder, filepath.Join(folder, "uploaded"), filepath.Join(folder, "sub", "new")} {
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != m.HostID || st.Gid != m.HostID {
			t.Errorf("%s is owned by %d:%d on the host, want the kernel's root %d", path, st.Uid, st.Gid, m.HostID)
		}
	}
	// The read-only folder is left as it was.
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dataset, "given"), &st); err != nil || st.Uid != 0 {
		t.Errorf("the read-only folder's file: owner %d, %v; want 0, untouched", st.Uid, err)
	}
}

// An agent configured with --kernel-userns=host runs kernels' root as the
// host's root (still with the minimal capabilities): the opt-out works.
func TestKernelHostUserNS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.UserNS = node.UserNSHost
	a, _ := h.runAgent(cfg)
	h.register(0)
	folder := t.TempDir()
	create := h.create("sh", "-c", `cat /proc/self/uid_map; echo x > /home/work/data/f`)
	create.Mounts = []protocol.Mount{{Source: folder, Target: "/home/work/data"}}
	h.send(create)
	if exited := h.status(0, create.KernelID, domain.PhaseExited); exited.ExitCode != 0 {
		t.Errorf("exit code = %d, want 0", exited.ExitCode)
	}
	logs, err := a.Logs(h.ctx, create.KernelID, runtime.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(logs)), " "); got != "0 0 4294967295" {
		t.Errorf("uid_map = %q, want the host's (0 0 4294967295)", got)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(folder, "f"), &st); err != nil || st.Uid != 0 {
		t.Errorf("file written by the kernel: owner %d, %v; want 0 (host root)", st.Uid, err)
	}
}
