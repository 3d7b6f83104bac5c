package podman

import (
	"time"

	"github.com/containers/podman/v5/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cairnhq/cairn/agents/runtime"
)

const (
	// cpuPeriod is the CFS period CPU limits are expressed in (100 ms,
	// the kernel's default), in microseconds.
	cpuPeriod = 100_000
	// logDriver keeps a container's output in a file that lives as long as
	// the container: readable after exit, gone with Remove. (journald
	// depends on the host's journal; none runs in a sandbox.)
	logDriver = "k8s-file"
	// restartNever: the agent, not Podman, decides what happens after a
	// kernel exits.
	restartNever = "no"
)

// specFor translates a validated, defaulted spec into Podman's.
func specFor(s runtime.ContainerSpec) *specgen.SpecGenerator {
	g := specgen.NewSpecGenerator(s.Image, false)
	g.Name = runtime.ContainerName(s.KernelID)
	g.Command = s.Command
	g.Env = s.Env
	g.Labels = s.AllLabels()
	g.Terminal = ptr(false)
	g.Stdin = ptr(false)
	g.RestartPolicy = restartNever
	g.LogConfiguration = &specgen.LogConfig{Driver: logDriver}
	g.StopTimeout = ptr(graceSeconds(s.StopGrace))
	g.NoNewPrivileges = ptr(true)
	g.ResourceLimits = resourcesFor(s)
	// Podman names rlimits like ulimit does and adds the RLIMIT_ prefix.
	g.Rlimits = []spec.POSIXRlimit{
		{Type: "nofile", Soft: s.Rlimits.NoFile.Soft, Hard: s.Rlimits.NoFile.Hard},
		{Type: "nproc", Soft: s.Rlimits.NProc.Soft, Hard: s.Rlimits.NProc.Hard},
	}
	for _, d := range s.Devices {
		// A fully qualified CDI name as the path: Podman resolves it
		// through the host's CDI specs.
		g.Devices = append(g.Devices, spec.LinuxDevice{Path: d})
	}
	for _, m := range s.Mounts {
		g.Mounts = append(g.Mounts, mountFor(m))
	}
	return g
}

// resourcesFor returns the CPU and memory limits, or nil when there are
// none. Memory includes swap: a kernel gets no swap beyond its limit.
func resourcesFor(s runtime.ContainerSpec) *spec.LinuxResources {
	if s.CPU == 0 && s.MemoryBytes == 0 {
		return nil
	}
	res := &spec.LinuxResources{}
	if s.CPU > 0 {
		res.CPU = &spec.LinuxCPU{
			Period: ptr(uint64(cpuPeriod)),
			Quota:  ptr(s.CPU * cpuPeriod / 1000),
		}
	}
	if s.MemoryBytes > 0 {
		res.Memory = &spec.LinuxMemory{
			Limit: ptr(s.MemoryBytes),
			Swap:  ptr(s.MemoryBytes),
		}
	}
	return res
}

// mountFor is a recursive bind mount with the mount's permission; setuid
// binaries and device nodes on a vfolder are never honoured.
func mountFor(m runtime.Mount) spec.Mount {
	perm := "rw"
	if m.ReadOnly {
		perm = "ro"
	}
	return spec.Mount{
		Type:        "bind",
		Source:      m.Source,
		Destination: m.Target,
		Options:     []string{"rbind", perm, "nosuid", "nodev"},
	}
}

// graceSeconds rounds a grace period up to whole seconds, at least one.
func graceSeconds(d time.Duration) uint {
	s := uint((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

func ptr[T any](v T) *T { return &v }
