package node

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// unlimitedCgroupBytes: cgroup v1 reports "no limit" as a huge number
// (the largest page-aligned int64); anything at or above this is none.
const unlimitedCgroupBytes = 1 << 62

// HostCapacity returns the cpu and mem slots this machine offers to
// kernels: the CPUs this process may run on (runtime.NumCPU, which
// honours CPU affinity) and MemTotal of /proc/meminfo, each lowered to the
// limit of the cgroup the agent sees as its root, v2 (cpu.max, memory.max)
// or v1 (cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes).
// That limit binds when the agent runs in a container or VM slice sized to
// the share of the node Cairn may use; the cgroups of individual processes
// below it (a login session's, say) are not the node's capacity and are
// ignored. Config.CPU and Config.MemoryBytes override the result.
func HostCapacity() (domain.Slots, error) {
	return hostCapacity("/", goruntime.NumCPU())
}

// hostCapacity is HostCapacity with the file system under root (for
// tests) and a CPU count.
func hostCapacity(root string, numCPU int) (domain.Slots, error) {
	cpu := domain.Units(int64(numCPU))
	if quota, ok, err := cgroupCPU(root); err != nil {
		return nil, err
	} else if ok && quota < cpu {
		cpu = quota
	}
	mem, err := memTotal(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return nil, err
	}
	if limit, ok, err := cgroupMemory(root); err != nil {
		return nil, err
	} else if ok && limit < mem {
		mem = limit
	}
	if cpu <= 0 || mem <= 0 {
		return nil, fmt.Errorf("host capacity: cpu %s, memory %d bytes: nothing to offer", cpu, mem)
	}
	return domain.Slots{domain.SlotCPU: cpu, domain.SlotMem: domain.Units(mem)}, nil
}

// memTotal reads MemTotal from a meminfo file, in bytes.
func memTotal(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("host memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || fields[0] != "MemTotal:" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || kb <= 0 || (len(fields) > 2 && fields[2] != "kB") {
			return 0, fmt.Errorf("host memory: %s: bad MemTotal line %q", path, sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("host memory: %s has no MemTotal", path)
}

// cgroupCPU returns the CPU limit of the root cgroup, if it has one.
func cgroupCPU(root string) (domain.Quantity, bool, error) {
	// v2: "max 100000" or "<quota> <period>".
	if data, ok, err := readOptional(filepath.Join(root, "sys/fs/cgroup/cpu.max")); err != nil || ok {
		if err != nil {
			return 0, false, err
		}
		f := strings.Fields(data)
		if len(f) != 2 || f[0] == "max" {
			return 0, false, nil
		}
		return cpuQuota(f[0], f[1])
	}
	// v1: quota -1 is no limit.
	quota, okQ, err := readOptional(filepath.Join(root, "sys/fs/cgroup/cpu/cpu.cfs_quota_us"))
	if err != nil || !okQ {
		return 0, false, err
	}
	period, okP, err := readOptional(filepath.Join(root, "sys/fs/cgroup/cpu/cpu.cfs_period_us"))
	if err != nil || !okP || strings.HasPrefix(strings.TrimSpace(quota), "-") {
		return 0, false, err
	}
	return cpuQuota(quota, period)
}

// cpuQuota converts a CFS quota and period (microseconds) into cores.
func cpuQuota(quota, period string) (domain.Quantity, bool, error) {
	q, err1 := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	p, err2 := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false, fmt.Errorf("cgroup cpu limit: bad quota %q or period %q", quota, period)
	}
	if q > math.MaxInt64/domain.QuantityScale {
		return 0, false, nil
	}
	return domain.Quantity(q * domain.QuantityScale / p), true, nil
}

// cgroupMemory returns the memory limit of the root cgroup, if it has one.
func cgroupMemory(root string) (int64, bool, error) {
	for _, name := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, ok, err := readOptional(filepath.Join(root, name))
		if err != nil {
			return 0, false, err
		}
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "max" {
			return 0, false, nil
		}
		v, err := strconv.ParseInt(data, 10, 64)
		if err != nil || v <= 0 {
			return 0, false, fmt.Errorf("cgroup memory limit: %s: bad value %q", name, data)
		}
		if v >= unlimitedCgroupBytes {
			return 0, false, nil
		}
		return v, true, nil
	}
	return 0, false, nil
}

// readOptional reads a small file; a missing one is not an error.
func readOptional(path string) (string, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}
