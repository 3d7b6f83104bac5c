package podman

import (
	"strings"
	"time"

	nettypes "github.com/containers/common/libnetwork/types"
	"github.com/containers/podman/v5/pkg/specgen"
	"github.com/containers/storage/pkg/idtools"
	"github.com/containers/storage/types"
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
	// Drop everything, then add back the spec's set: the result does not
	// depend on the service's default list.
	g.CapDrop = []string{"ALL"}
	g.CapAdd = capabilityNames(s.Capabilities)
	if m := s.UserNS; m != nil {
		g.UserNS = specgen.Namespace{NSMode: specgen.Private}
		ids := []idtools.IDMap{{ContainerID: 0, HostID: int(m.HostID), Size: int(m.Size)}}
		g.IDMappings = &types.IDMappingOptions{UIDMap: ids, GIDMap: ids}
	}
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
	for _, p := range s.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = "tcp"
		}
		g.PortMappings = append(g.PortMappings, nettypes.PortMapping{
			HostIP: p.HostIP, HostPort: uint16(p.HostPort), ContainerPort: uint16(p.ContainerPort), Protocol: proto,
		})
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

// capabilityNames spells capabilities as Podman does, CAP_ first.
func capabilityNames(caps []string) []string {
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		c = strings.ToUpper(c)
		if !strings.HasPrefix(c, "CAP_") {
			c = "CAP_" + c
		}
		out = append(out, c)
	}
	return out
}

// graceSeconds rounds a grace period up to whole seconds, at least one.
func graceSeconds(d time.Duration) uint {
	s := uint((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

func ptr[T any](v T) *T { return &v }
