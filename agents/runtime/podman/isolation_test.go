package podman

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// capabilityBits are the numbers of the capabilities these tests name
// (linux/capability.h).
var capabilityBits = map[string]uint{
	"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6,
	"SETUID": 7, "SETPCAP": 8, "NET_BIND_SERVICE": 10, "SYS_CHROOT": 18, "SETFCAP": 31,
}

func capabilityMask(t *testing.T, names []string) uint64 {
	t.Helper()
	var m uint64
	for _, n := range names {
		bit, ok := capabilityBits[strings.TrimPrefix(strings.ToUpper(n), "CAP_")]
		if !ok {
			t.Fatalf("capability %s: add its number to capabilityBits", n)
		}
		m |= 1 << bit
	}
	return m
}

// A kernel's processes hold exactly the spec's capabilities (the defaults
// when it names none), in every set, with and without a user namespace.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		caps   []string
		userns bool
		want   []string
	}{
		{"defaults", nil, false, runtime.DefaultCapabilities},
		{"defaults in a user namespace", nil, true, runtime.DefaultCapabilities},
		{"none", []string{}, true, nil},
		{"named", []string{"net_bind_service", "CAP_CHOWN"}, true, []string{"NET_BIND_SERVICE", "CHOWN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			spec := h.spec("grep", "^Cap", "/proc/self/status")
			spec.Capabilities = tc.caps
			if tc.userns {
				spec.UserNS = &runtime.DefaultIDMap
			}
			logs := h.runToEnd(spec)
			want := capabilityMask(t, tc.want)
			for _, set := range []string{"CapPrm", "CapEff", "CapBnd"} {
				if got := capabilitySet(t, logs, set); got != want {
					t.Errorf("%s = %#x, want %#x (%v)\n%s", set, got, want, tc.want, logs)
				}
			}
			if got := capabilitySet(t, logs, "CapAmb"); got != 0 {
				t.Errorf("CapAmb = %#x, want 0", got)
			}
		})
	}
}

// What the kept capabilities are for still works in a user namespace
// (dropping to the session user, chown, root writing a file that denies
// it), and what was dropped is refused.
func TestKeptCapabilitiesSuffice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Refused commands' errors go to /dev/null, as in TestMounts.
	spec := h.spec("sh", "-c", `busybox su work -s /bin/sh -c 'id -u'
touch /tmp/f && busybox chown 1000:1000 /tmp/f && echo chown-ok
echo ro > /tmp/ro && busybox chmod 0444 /tmp/ro && echo rw > /tmp/ro && echo dac-override-ok
busybox chroot / true 2>/dev/null || echo chroot-refused
busybox mknod /tmp/null c 1 3 2>/dev/null || echo mknod-refused`)
	spec.UserNS = &runtime.DefaultIDMap
	logs := h.runToEnd(spec)
	for _, want := range []string{"1000", "chown-ok", "dac-override-ok", "chroot-refused", "mknod-refused"} {
		if !containsLine(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// In a user namespace the kernel's root is root inside, and the mapped id
// on the host: its process and the files it writes to a mount.
func TestUserNamespace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := runtime.DefaultIDMap
	rw := h.claimedDir(m)
	spec := h.spec("sh", "-c", `id -u
cat /proc/self/uid_map
echo hi > /home/work/rw/written
echo ready
sleep 30`)
	spec.UserNS = &m
	spec.Mounts = []runtime.Mount{{Source: rw, Target: "/home/work/rw"}}
	c := h.run(spec)
	logs := h.logsUntil(c.ID, "ready")
	if !containsLine(logs, "0") {
		t.Errorf("id -u inside is not 0:\n%s", logs)
	}
	if want := fmt.Sprintf("0 %d %d", m.HostID, m.Size); !strings.Contains(strings.Join(strings.Fields(logs), " "), want) {
		t.Errorf("uid_map lacks %q:\n%s", want, logs)
	}

	// The host's view of the file it wrote.
	st := hostStat(t, filepath.Join(rw, "written"))
	if st.Uid != m.HostID || st.Gid != m.HostID {
		t.Errorf("the file the kernel's root wrote is owned by %d:%d on the host, want %d:%d", st.Uid, st.Gid, m.HostID, m.HostID)
	}
	// The host's view of its process.
	data, err := containers.Inspect(h.rt.call(h.ctx), c.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data.State == nil || data.State.Pid == 0 {
		t.Fatalf("no pid for the running kernel: %+v", data.State)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", data.State.Pid))
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatUint(uint64(m.HostID), 10)
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
			for _, id := range f[1:] {
				if id != want {
					t.Errorf("host sees the kernel's process as %s, want every id %s", line, want)
					break
				}
			}
		}
	}
}

// A setuid binary the kernel's root makes on a mount does not raise the
// session user inside (the mount is nosuid, the process no-new-privileges)
// and, with a user namespace, belongs to the mapped id on the host, so
// running it there does not give root either.
func TestSetuidOnMountIsInert(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := runtime.DefaultIDMap
	tools := t.TempDir()
	buildEUID(t, filepath.Join(tools, "euid"))
	rw := h.claimedDir(m)
	spec := h.spec("sh", "-c", `cp /tools/euid /home/work/rw/euid && busybox chmod 4755 /home/work/rw/euid && echo made
busybox su work -s /bin/sh -c /home/work/rw/euid
grep ' /home/work/rw ' /proc/self/mountinfo`)
	spec.UserNS = &m
	spec.Mounts = []runtime.Mount{
		{Source: tools, Target: "/tools", ReadOnly: true},
		{Source: rw, Target: "/home/work/rw"},
	}
	logs := h.runToEnd(spec)
	if !containsLine(logs, "made") {
		t.Fatalf("the kernel could not make its setuid file:\n%s", logs)
	}
	if !containsLine(logs, "1000") {
		t.Errorf("the setuid file did not run as the session user (uid 1000):\n%s", logs)
	}
	if !mountHasOptions(logs, "/home/work/rw", "nosuid", "nodev") {
		t.Errorf("the mount lacks nosuid,nodev:\n%s", logs)
	}

	file := filepath.Join(rw, "euid")
	st := hostStat(t, file)
	if st.Mode&syscall.S_ISUID == 0 || st.Uid != m.HostID {
		t.Fatalf("on the host: mode %o owner %d, want setuid and owned by %d", st.Mode, st.Uid, m.HostID)
	}
	// Run it on the host as nobody: the bit takes effect there (the host
	// directory is not nosuid), but to the mapped id, not root.
	for dir := rw; dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run %s as nobody on the host: %v", file, err)
	}
	if got, want := strings.TrimSpace(string(out)), strconv.FormatUint(uint64(m.HostID), 10); got != want {
		t.Errorf("on the host, the kernel's setuid file runs as %s, want %s (never 0)", got, want)
	}
}

// A device node on a mount cannot be opened from the kernel (nodev), with
// and without a user namespace, even by its root.
func TestDeviceNodeOnMountIsInert(t *testing.T) {
	t.Parallel()
	for _, userns := range []bool{false, true} {
		t.Run(fmt.Sprintf("userns=%v", userns), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			dir := t.TempDir()
			for name, minor := range map[string]int{"null": 3, "zero": 5} {
				if err := syscall.Mknod(filepath.Join(dir, name), syscall.S_IFCHR|0o666, int(mkdev(1, minor))); err != nil {
					t.Fatalf("mknod: %v (the test needs root)", err)
				}
				if err := os.Chmod(filepath.Join(dir, name), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			spec := h.spec("sh", "-c", `if { echo x > /mnt/dev/null; } 2>/dev/null; then echo null-written; else echo null-refused; fi
if head -c 1 /mnt/dev/zero >/dev/null 2>&1; then echo zero-read; else echo zero-refused; fi`)
			if userns {
				spec.UserNS = &runtime.DefaultIDMap
			}
			spec.Mounts = []runtime.Mount{{Source: dir, Target: "/mnt/dev"}}
			logs := h.runToEnd(spec)
			for _, want := range []string{"null-refused", "zero-refused"} {
				if !containsLine(logs, want) {
					t.Errorf("logs lack %q:\n%s", want, logs)
				}
			}
		})
	}
}

// mkdev is makedev(3) for the small numbers these tests use.
func mkdev(major, minor int) uint64 { return uint64(major)<<8 | uint64(minor) }

// runToEnd runs spec, waits for it to exit 0 and returns its logs.
func (h *harness) runToEnd(spec runtime.ContainerSpec) string {
	h.t.Helper()
	c := h.run(spec)
	code, err := h.rt.Wait(h.ctx, c.ID)
	logs, lerr := h.rt.Logs(h.ctx, c.ID, runtime.LogOptions{})
	if lerr != nil {
		h.t.Fatalf("logs: %v", lerr)
	}
	if err != nil || code != 0 {
		h.t.Fatalf("wait = %d, %v; logs:\n%s", code, err, logs)
	}
	return string(logs)
}

// claimedDir is a fresh directory owned by the mapping's root, as the
// agent leaves a read-write mount for a kernel in a user namespace.
func (h *harness) claimedDir(m runtime.IDMap) string {
	h.t.Helper()
	dir := h.t.TempDir()
	if err := os.Chown(dir, int(m.HostID), int(m.HostID)); err != nil {
		h.t.Fatalf("chown %s: %v (the test needs root)", dir, err)
	}
	return dir
}

func hostStat(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// capabilitySet parses a capability set line of /proc/self/status.
func capabilitySet(t *testing.T, status, set string) uint64 {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == set+":" {
			v, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s line in:\n%s", set, status)
	return 0
}

// mountHasOptions reports whether the mountinfo line of target carries
// every option in its per-mount options (the sixth field).
func mountHasOptions(mountinfo, target string, opts ...string) bool {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[4] != target {
			continue
		}
		have := strings.Split(f[5], ",")
		for _, o := range opts {
			if !containsLine(strings.Join(have, "\n"), o) {
				return false
			}
		}
		return true
	}
	return false
}

// buildEUID builds testdata/euid as a static binary at out: the image has
// no libc, and busybox drops a setuid bit by itself, so it cannot show
// whether the bit took effect.
func buildEUID(t *testing.T, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "./testdata/euid")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/euid: %v\n%s", err, b)
	}
}

// Rootless tells the rootful service install-podman.sh starts from a
// rootless one.
func TestRootless(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rootless, err := h.rt.Rootless(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.uri == DefaultURI && rootless {
		t.Errorf("the service at %s says it is rootless", h.uri)
	}
}

func TestCheckCapabilities(t *testing.T) {
	t.Parallel()
	if err := CheckCapabilities(append([]string{"net_bind_service", "CAP_SYS_PTRACE"}, runtime.DefaultCapabilities...)); err != nil {
		t.Errorf("known names: %v", err)
	}
	for _, bad := range [][]string{{"CAP_NOPE"}, {"all"}, {"CHOWN", "SETUID "}} {
		if err := CheckCapabilities(bad); !errors.Is(err, runtime.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
}
