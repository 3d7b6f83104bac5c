package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

func TestHostCapacity(t *testing.T) {
	t.Parallel()
	const meminfo = "MemTotal:       16384000 kB\nMemFree:         1000 kB\n"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		numCPU  int
		wantCPU domain.Quantity
		wantMem int64
		wantErr bool
	}{
		{"no cgroup limits", map[string]string{"proc/meminfo": meminfo}, 8, domain.Units(8), 16384000 << 10, false},
		{"cgroup v2 limits", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/cpu.max": "250000 100000\n", "sys/fs/cgroup/memory.max": "4294967296\n"},
			8, 2500, 4 << 30, false},
		{"cgroup v2 without limits", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/cpu.max": "max 100000\n", "sys/fs/cgroup/memory.max": "max\n"},
			4, domain.Units(4), 16384000 << 10, false},
		{"cgroup v2 limit above the host", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/cpu.max": "1600000 100000\n", "sys/fs/cgroup/memory.max": "99999999999999\n"},
			4, domain.Units(4), 16384000 << 10, false},
		{"cgroup v1 limits", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "150000", "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824"}, 8, 1500, 1 << 30, false},
		{"cgroup v1 unlimited", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1", "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, 2, domain.Units(2), 16384000 << 10, false},
		{"no meminfo", map[string]string{}, 2, 0, 0, true},
		{"bad meminfo", map[string]string{"proc/meminfo": "MemTotal: lots kB\n"}, 2, 0, 0, true},
		{"bad cgroup value", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": "many\n"}, 2, 0, 0, true},
	} {
		root := t.TempDir()
		for name, content := range tc.files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := hostCapacity(root, tc.numCPU)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: %v, want an error", tc.name, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got[domain.SlotCPU] != tc.wantCPU || got[domain.SlotMem] != domain.Units(tc.wantMem) {
			t.Errorf("%s: cpu %s mem %s, want %s and %d bytes", tc.name, got[domain.SlotCPU], got[domain.SlotMem], tc.wantCPU, tc.wantMem)
		}
	}
	// This machine has something to offer.
	host, err := HostCapacity()
	if err != nil || host[domain.SlotCPU] <= 0 || host[domain.SlotMem] <= 0 {
		t.Errorf("HostCapacity() = %v, %v", host, err)
	}
}
