package runtime

import (
	"errors"
	"fmt"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defaults and floors applied to a ContainerSpec.
const (
	// DefaultStopGrace is how long Remove lets a kernel handle SIGTERM
	// before it is killed, when the spec does not say.
	DefaultStopGrace = 10 * time.Second
	// MinCPU is the smallest CPU limit, in millicores (1% of a core).
	MinCPU = 10
	// MinMemoryBytes is the smallest memory limit a container can start
	// with (the OCI runtimes refuse less).
	MinMemoryBytes = 6 << 20
	// maxKernelIDLen keeps ContainerName well inside what runtimes accept.
	maxKernelIDLen = 128
)

// DefaultRlimit is used for an rlimit the spec leaves zero. It is low on
// purpose: raising a hard limit above the agent's own needs
// CAP_SYS_RESOURCE, which sandboxes (and this project's CI) lack.
var DefaultRlimit = Rlimit{Soft: 1024, Hard: 1024}

// ContainerSpec is everything the agent asks of one kernel's container.
// Resource amounts are domain-neutral: the adapter translates them into
// its runtime's terms.
type ContainerSpec struct {
	KernelID  string // identity of the container: one container per kernel id
	SessionID string
	AgentID   string // the agent that owns the container (List finds it by this)

	Image   string   // reference, present locally (see Runtime.EnsureImage)
	Command []string // empty: the image's default command
	Env     map[string]string

	CPU         int64 // limit in millicores (1000 = one core); 0: unlimited
	MemoryBytes int64 // limit in bytes, swap included; 0: unlimited
	Rlimits     Rlimits

	// Labels are extra labels; the cairn.* namespace is reserved for the
	// managed labels (see ManagedLabels).
	Labels map[string]string
	// Devices are CDI device names, such as nvidia.com/gpu=<uuid> or a MIG
	// device's uuid; empty for a CPU-only kernel.
	Devices []string
	// Mounts are bind mounts (vfolders) with their permission. Every one
	// is nosuid and nodev: setuid bits and device nodes on it are inert.
	Mounts []Mount

	// Ports publish container ports on host ports. Only loopback host
	// addresses are accepted: a kernel's apps are reached through the
	// agent's authenticated endpoint, never directly from the network.
	Ports []PortMapping

	// UserNS, when set, runs the container in its own user namespace with
	// this mapping, so its root is an unprivileged id on the host; nil
	// shares the host's (the container's root is the host's root).
	UserNS *IDMap
	// Capabilities are the only capabilities the container's processes may
	// have (names like CHOWN or CAP_CHOWN); nil means DefaultCapabilities,
	// empty means none. The container also runs with no-new-privileges.
	Capabilities []string

	// StopGrace is how long the kernel may take to exit after SIGTERM
	// before it is killed; 0: DefaultStopGrace.
	StopGrace time.Duration
}

// Mount bind-mounts a host path into the container.
type Mount struct {
	Source   string // absolute host path; must exist
	Target   string // absolute path inside the container
	ReadOnly bool
}

// PortMapping publishes one container port on a host address and port.
type PortMapping struct {
	HostIP        string // a loopback address, such as 127.0.0.1
	HostPort      int
	ContainerPort int
	Protocol      string // tcp (the default when empty)
}

// Rlimit is a soft and a hard POSIX resource limit.
type Rlimit struct {
	Soft uint64
	Hard uint64
}

// Rlimits are the POSIX resource limits a kernel gets. A zero Rlimit means
// DefaultRlimit.
type Rlimits struct {
	NoFile Rlimit // RLIMIT_NOFILE: open files
	NProc  Rlimit // RLIMIT_NPROC: processes
}

// WithDefaults returns a copy of s with defaults filled in for what it
// leaves zero: the rlimits, the stop grace period and the capabilities.
func (s ContainerSpec) WithDefaults() ContainerSpec {
	if s.Rlimits.NoFile == (Rlimit{}) {
		s.Rlimits.NoFile = DefaultRlimit
	}
	if s.Rlimits.NProc == (Rlimit{}) {
		s.Rlimits.NProc = DefaultRlimit
	}
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	if s.Capabilities == nil {
		s.Capabilities = slices.Clone(DefaultCapabilities)
	}
	return s
}

// kernelIDPattern is what a container name may be made of.
var kernelIDPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// Validate reports every problem with the spec at once; each matches
// ErrInvalid. Call it on the result of WithDefaults: zero rlimits and a
// zero stop grace are accepted as "use the default".
func (s ContainerSpec) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...)))
	}

	switch {
	case s.KernelID == "":
		bad("kernel id", "is empty")
	case len(s.KernelID) > maxKernelIDLen:
		bad("kernel id", "is longer than %d characters", maxKernelIDLen)
	case !kernelIDPattern.MatchString(s.KernelID):
		bad("kernel id", "%q may only hold letters, digits, '_', '.' and '-', and must start with a letter or digit", s.KernelID)
	}
	if s.SessionID == "" {
		bad("session id", "is empty")
	}
	if s.AgentID == "" {
		bad("agent id", "is empty")
	}
	if strings.TrimSpace(s.Image) == "" {
		bad("image", "is empty")
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			bad("env", "invalid variable name %q", k)
		}
	}
	if s.CPU < 0 || (s.CPU > 0 && s.CPU < MinCPU) {
		bad("cpu", "%d millicores: must be 0 (unlimited) or at least %d", s.CPU, MinCPU)
	}
	if s.MemoryBytes < 0 || (s.MemoryBytes > 0 && s.MemoryBytes < MinMemoryBytes) {
		bad("memory", "%d bytes: must be 0 (unlimited) or at least %d", s.MemoryBytes, MinMemoryBytes)
	}
	if rl := s.Rlimits.NoFile; rl.Soft > rl.Hard {
		bad("rlimit nofile", "soft limit %d is above the hard limit %d", rl.Soft, rl.Hard)
	}
	if rl := s.Rlimits.NProc; rl.Soft > rl.Hard {
		bad("rlimit nproc", "soft limit %d is above the hard limit %d", rl.Soft, rl.Hard)
	}
	for k := range s.Labels {
		if k == "" {
			bad("labels", "empty label name")
		} else if IsReservedLabel(k) {
			bad("labels", "%q: the %s namespace is reserved", k, ReservedLabelPrefix)
		}
	}
	for _, d := range s.Devices {
		if !isCDIName(d) {
			bad("devices", "%q is not a CDI device name (vendor.com/class=name)", d)
		}
	}
	targets := make(map[string]bool, len(s.Mounts))
	for _, m := range s.Mounts {
		if !path.IsAbs(m.Source) {
			bad("mounts", "source %q is not an absolute path", m.Source)
		}
		switch {
		case !path.IsAbs(m.Target):
			bad("mounts", "target %q is not an absolute path", m.Target)
		case path.Clean(m.Target) == "/":
			bad("mounts", "target may not be /")
		case targets[path.Clean(m.Target)]:
			bad("mounts", "target %q is mounted twice", m.Target)
		}
		targets[path.Clean(m.Target)] = true
	}
	hostPorts, containerPorts := map[int]bool{}, map[int]bool{}
	for _, p := range s.Ports {
		if ip := net.ParseIP(p.HostIP); ip == nil || !ip.IsLoopback() {
			bad("ports", "host address %q is not a loopback address: apps are published on loopback only", p.HostIP)
		}
		switch {
		case p.HostPort < 1 || p.HostPort > 65535:
			bad("ports", "host port %d is not between 1 and 65535", p.HostPort)
		case hostPorts[p.HostPort]:
			bad("ports", "host port %d is used twice", p.HostPort)
		}
		switch {
		case p.ContainerPort < 1 || p.ContainerPort > 65535:
			bad("ports", "container port %d is not between 1 and 65535", p.ContainerPort)
		case containerPorts[p.ContainerPort]:
			bad("ports", "container port %d is published twice", p.ContainerPort)
		}
		if p.Protocol != "" && p.Protocol != "tcp" {
			bad("ports", "protocol %q: only tcp is published", p.Protocol)
		}
		hostPorts[p.HostPort], containerPorts[p.ContainerPort] = true, true
	}
	if s.StopGrace < 0 {
		bad("stop grace", "%s is negative", s.StopGrace)
	}
	if s.UserNS != nil {
		if err := s.UserNS.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range s.Capabilities {
		if !validCapability(c) {
			bad("capabilities", "%q is not a capability name", c)
		}
	}
	return errors.Join(errs...)
}

// isCDIName reports whether d looks like a fully qualified CDI device name:
// vendor/class=name.
func isCDIName(d string) bool {
	kind, name, ok := strings.Cut(d, "=")
	if !ok || name == "" {
		return false
	}
	vendor, class, ok := strings.Cut(kind, "/")
	return ok && vendor != "" && class != "" && !strings.Contains(class, "/")
}
