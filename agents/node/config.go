package node

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/agents/accelerator/nvml"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultGPUs              = nvml.SourceNone
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultRegisterInterval  = 5 * time.Minute
	DefaultRetryMin          = 250 * time.Millisecond
	DefaultRetryMax          = 30 * time.Second
	// DefaultRecordTTL keeps what the agent remembers of a removed kernel
	// (its final report and its logs) for longer than the bus keeps
	// commands for agents (bus.DefaultAgentMaxAge, 7 days), so that a
	// kernel.create redelivered that late still creates nothing.
	DefaultRecordTTL = 8 * 24 * time.Hour
	// DefaultLogArchiveBytes caps the logs kept of a removed kernel.
	DefaultLogArchiveBytes = runtime.DefaultLogMaxBytes

	// DefaultTerminalDetachTimeout is how long a terminal outlives its
	// last client.
	DefaultTerminalDetachTimeout = 30 * time.Minute
	// DefaultTerminalScrollback is how much of a terminal's latest output
	// a client that attaches again is sent.
	DefaultTerminalScrollback = 256 << 10
	// DefaultTerminalsPerKernel caps the terminals of one kernel.
	DefaultTerminalsPerKernel = 8
	// DefaultTerminalPingInterval is how often an attached client is
	// pinged: often enough that load balancers keep an idle connection.
	DefaultTerminalPingInterval = 20 * time.Second

	// DefaultActivityInterval is how often the agent looks for use inside
	// its kernels and reports it (at most one kernel.activity per session
	// per interval).
	DefaultActivityInterval = 30 * time.Second
	// DefaultGPUIdleWindow is how long GPU utilisation is averaged over.
	DefaultGPUIdleWindow = 5 * time.Minute
	// DefaultGPUIdleThreshold is the average GPU utilisation, in percent,
	// at or above which a kernel's GPUs count as use.
	DefaultGPUIdleThreshold = 10

	// durablePrefix + agent id is the agent's durable consumer.
	durablePrefix = "agent-"
)

// User namespace modes (Config.UserNS).
const (
	// UserNSPrivate runs every kernel in its own user namespace, its ids
	// mapped to Config.UserNSHostID and up on the host: a kernel's root is
	// an unprivileged id there. The default.
	UserNSPrivate = "private"
	// UserNSHost shares the host's user namespace: a kernel's root is the
	// host's root (capabilities still dropped). For hosts that cannot give
	// kernels a user namespace.
	UserNSHost = "host"
)

// Config configures an agent. AgentID, BusURL and DataDir are required;
// every other zero field takes its default.
type Config struct {
	// AgentID names the agent, its bus topic (cairn.agent.<id>) and its
	// containers (label cairn.agent). Stable across restarts: the agent
	// adopts the containers labelled with it.
	AgentID string
	// BusURL is the NATS server: nats://host:4222.
	BusURL string
	// BusCredentialsFile is a NATS .creds file, if the server needs one.
	BusCredentialsFile string
	// BusCAFile is the CA certificate that signed the bus server's TLS
	// certificate, when the server uses a private CA (`cairn dev` listening
	// beyond loopback: bus-keys/bus-ca.pem in its data directory).
	BusCAFile string
	// PodmanURI is the Podman service (default podman.DefaultURI,
	// unix:///run/podman/podman.sock).
	PodmanURI string
	// GPUs is the accelerator discovery spec (nvml, nvml:<path>, none,
	// mock:<server>...; see agents/accelerator/nvml). Default none.
	GPUs string
	// CDIDirs are where NVIDIA CDI specs are looked for (default
	// accelerator.DefaultCDIDirs).
	CDIDirs []string
	// Architecture is the CPU architecture images must match (default this
	// machine's: x86_64, aarch64...).
	Architecture string
	// CPU and MemoryBytes override the discovered host capacity (0:
	// discovered; see HostCapacity).
	CPU         domain.Quantity
	MemoryBytes int64
	// DataDir keeps the agent's own records (see the package
	// documentation). Required.
	DataDir string
	// Listen is the address of the HTTP endpoint that serves kernel logs
	// (host:port); empty: none.
	Listen string
	// Advertise is the base URL the manager reaches the endpoint at
	// (http://host:port); default: from Listen, with this machine's host
	// name when Listen's host is unspecified.
	Advertise string
	// AppPortRange is where the host ports of kernels' service ports come
	// from (default DefaultAppPortRange). They are published on 127.0.0.1
	// only; the endpoint on Listen proxies signed requests to them.
	AppPortRange PortRange
	// HeartbeatInterval is how often the agent sends agent.heartbeat.
	HeartbeatInterval time.Duration
	// RegisterInterval is how often the agent sends agent.register again
	// (each answered by a kernel.sync).
	RegisterInterval time.Duration
	// StopGrace is how long a kernel may take to exit after SIGTERM when its
	// container is removed (default runtime.DefaultStopGrace).
	StopGrace time.Duration
	// Rlimits are the kernels' POSIX limits (zero: runtime.DefaultRlimit).
	Rlimits runtime.Rlimits
	// UserNS is UserNSPrivate (default) or UserNSHost.
	UserNS string
	// UserNSHostID and UserNSSize are the host ids a kernel's ids map to
	// under UserNSPrivate: container id i is host id UserNSHostID+i, for i
	// below UserNSSize (defaults runtime.DefaultIDMap). Every agent whose
	// kernels share storage should use the same mapping: it decides who
	// owns their files.
	UserNSHostID uint32
	UserNSSize   uint32
	// Capabilities are the only capabilities kernels keep (nil:
	// runtime.DefaultCapabilities; empty: none).
	Capabilities []string
	// RetryMin and RetryMax bound the backoff of retried calls to Podman
	// and the bus while they are unavailable.
	RetryMin time.Duration
	RetryMax time.Duration
	// RecordTTL is how long a removed kernel's record and logs are kept.
	RecordTTL time.Duration
	// LogArchiveBytes caps the logs kept of a removed kernel.
	LogArchiveBytes int
	// TerminalDetachTimeout is how long a terminal (a shell in a kernel,
	// served on Listen) stays alive without a client attached.
	TerminalDetachTimeout time.Duration
	// TerminalScrollback is how many bytes of a terminal's latest output
	// the agent keeps to send a client that attaches again.
	TerminalScrollback int
	// TerminalsPerKernel caps the terminals one kernel has at a time.
	TerminalsPerKernel int
	// TerminalPingInterval is how often the agent pings a terminal's
	// client; a client that does not answer within it is dropped.
	TerminalPingInterval time.Duration
	// ActivityInterval is how often the agent looks for use inside its
	// kernels (notebook kernels, terminals, GPUs) and reports it.
	ActivityInterval time.Duration
	// GPUIdleWindow is how long a kernel's GPU utilisation is averaged
	// over; GPUIdleThreshold (percent, 1-100) is the average at or above
	// which its GPUs count as use.
	GPUIdleWindow    time.Duration
	GPUIdleThreshold int
	// Version is reported in agent.register.
	Version string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.PodmanURI == "" {
		c.PodmanURI = podman.DefaultURI
	}
	if c.GPUs == "" {
		c.GPUs = DefaultGPUs
	}
	if c.Architecture == "" {
		c.Architecture = HostArchitecture()
	}
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&c.RegisterInterval, DefaultRegisterInterval)
	def(&c.StopGrace, runtime.DefaultStopGrace)
	def(&c.RetryMin, DefaultRetryMin)
	def(&c.RetryMax, DefaultRetryMax)
	def(&c.RecordTTL, DefaultRecordTTL)
	if c.LogArchiveBytes == 0 {
		c.LogArchiveBytes = DefaultLogArchiveBytes
	}
	def(&c.TerminalDetachTimeout, DefaultTerminalDetachTimeout)
	def(&c.TerminalPingInterval, DefaultTerminalPingInterval)
	def(&c.ActivityInterval, DefaultActivityInterval)
	def(&c.GPUIdleWindow, DefaultGPUIdleWindow)
	if c.GPUIdleThreshold == 0 {
		c.GPUIdleThreshold = DefaultGPUIdleThreshold
	}
	if c.TerminalScrollback == 0 {
		c.TerminalScrollback = DefaultTerminalScrollback
	}
	if c.TerminalsPerKernel == 0 {
		c.TerminalsPerKernel = DefaultTerminalsPerKernel
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.AppPortRange == (PortRange{}) {
		c.AppPortRange = DefaultAppPortRange
	}
	if c.UserNS == "" {
		c.UserNS = UserNSPrivate
	}
	if c.UserNSHostID == 0 {
		c.UserNSHostID = runtime.DefaultIDMap.HostID
	}
	if c.UserNSSize == 0 {
		c.UserNSSize = runtime.DefaultIDMap.Size
	}
	if c.Capabilities == nil {
		c.Capabilities = slices.Clone(runtime.DefaultCapabilities)
	}
	return c
}

// idMap is the user namespace mapping of kernels, nil under UserNSHost.
func (c Config) idMap() *runtime.IDMap {
	d := c.WithDefaults()
	if d.UserNS == UserNSHost {
		return nil
	}
	return &runtime.IDMap{HostID: d.UserNSHostID, Size: d.UserNSSize}
}

// Validate reports every problem at once (errors.Join). Zero fields other
// than AgentID, BusURL and DataDir are valid: they take their defaults.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := protocol.ValidateAgentID(c.AgentID); err != nil {
		add("agent id: %w", err)
	} else if err := bus.ValidateID("durable", Durable(c.AgentID)); err != nil {
		add("agent id %q is too long for its durable consumer name: %w", c.AgentID, err)
	}
	if c.BusURL == "" {
		add("bus url: required (nats://host:4222)")
	} else if err := (bus.Config{URL: c.BusURL}).Validate(); err != nil {
		add("bus url: %w", err)
	}
	if c.PodmanURI != "" {
		u, err := url.Parse(c.PodmanURI)
		if err != nil || (u.Scheme != "unix" && u.Scheme != "tcp" && u.Scheme != "ssh") {
			add("podman uri %q: want unix:///path, tcp://host:port or ssh://...", c.PodmanURI)
		}
	}
	if c.GPUs != "" {
		if _, err := nvml.ParseSpec(c.GPUs); err != nil {
			add("gpus: %w", err)
		}
	}
	if c.DataDir == "" {
		add("data dir: required")
	}
	if c.ActivityInterval < 0 || c.GPUIdleWindow < 0 {
		add("activity interval %v, gpu idle window %v: must not be negative", c.ActivityInterval, c.GPUIdleWindow)
	}
	if c.GPUIdleThreshold < 0 || c.GPUIdleThreshold > 100 {
		add("gpu idle threshold %d: want a percentage, 1-100", c.GPUIdleThreshold)
	}
	if c.Listen != "" {
		if c.BusCredentialsFile == "" {
			add("listen %q: needs bus credentials (the endpoint answers only requests signed by the manager that issued them)", c.Listen)
		}
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			add("listen %q: %w", c.Listen, err)
		}
	}
	if c.Advertise != "" {
		u, err := url.Parse(c.Advertise)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("advertise %q: want http://host:port", c.Advertise)
		}
		if c.Listen == "" {
			add("advertise %q: needs listen", c.Advertise)
		}
	}
	if c.AppPortRange != (PortRange{}) {
		if err := c.AppPortRange.Validate(); err != nil {
			add("app ports: %w", err)
		}
	}
	if c.CPU < 0 {
		add("cpu %s: must not be negative", c.CPU)
	}
	if c.MemoryBytes < 0 {
		add("memory %d: must not be negative", c.MemoryBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"heartbeat interval", c.HeartbeatInterval}, {"register interval", c.RegisterInterval},
		{"stop grace", c.StopGrace}, {"retry min", c.RetryMin}, {"retry max", c.RetryMax},
		{"record ttl", c.RecordTTL}, {"terminal detach timeout", c.TerminalDetachTimeout},
		{"terminal ping interval", c.TerminalPingInterval},
	} {
		if d.v < 0 {
			add("%s %s: must not be negative", d.name, d.v)
		}
	}
	if d := c.WithDefaults(); d.RetryMin > d.RetryMax && c.RetryMin >= 0 && c.RetryMax >= 0 {
		add("retry min %s: must not exceed retry max %s", d.RetryMin, d.RetryMax)
	}
	if c.LogArchiveBytes < 0 {
		add("log archive bytes %d: must not be negative", c.LogArchiveBytes)
	}
	if c.TerminalScrollback < 0 {
		add("terminal scrollback %d: must not be negative", c.TerminalScrollback)
	}
	if c.TerminalsPerKernel < 0 {
		add("terminals per kernel %d: must not be negative", c.TerminalsPerKernel)
	}
	for _, rl := range []struct {
		name string
		v    runtime.Rlimit
	}{{"nofile", c.Rlimits.NoFile}, {"nproc", c.Rlimits.NProc}} {
		if rl.v.Soft > rl.v.Hard {
			add("rlimit %s: soft limit %d is above the hard limit %d", rl.name, rl.v.Soft, rl.v.Hard)
		}
	}
	switch c.UserNS {
	case "", UserNSPrivate:
		if err := c.idMap().Validate(); err != nil {
			add("kernel userns: %w", err)
		}
	case UserNSHost:
	default:
		add("kernel userns %q: want %s or %s", c.UserNS, UserNSPrivate, UserNSHost)
	}
	if err := podman.CheckCapabilities(c.Capabilities); err != nil {
		add("kernel capabilities: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agent: invalid config: %w", err)
	}
	return nil
}

// Durable is the name of an agent's durable consumer of its topic.
func Durable(agentID string) string { return durablePrefix + agentID }

// SanitizeAgentID makes an agent id of a name (a host name): every
// character an id may not hold becomes '-', and it is cut to the longest
// id whose durable consumer name (agent-<id>) the bus accepts, 122 bytes.
// An empty name stays empty (and fails Validate).
func SanitizeAgentID(name string) string {
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, name)
	return id[:min(len(id), maxAgentIDLength)]
}

// maxAgentIDLength is the longest agent id: its durable consumer name,
// agent-<id>, must fit the bus's limit.
const maxAgentIDLength = bus.MaxIDLength - len(durablePrefix)

// HostArchitecture is this machine's CPU architecture as images name it.
func HostArchitecture() string {
	switch goruntime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goruntime.GOARCH
}

// LogValue is the effective configuration for the start-up log line.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("agent_id", c.AgentID),
		slog.String("bus", redactURL(c.BusURL)),
		slog.Bool("bus_credentials_file", c.BusCredentialsFile != ""),
		slog.String("bus_ca_file", c.BusCAFile),
		slog.String("podman", c.PodmanURI),
		slog.String("gpus", c.GPUs),
		slog.String("architecture", c.Architecture),
		slog.String("data_dir", c.DataDir),
		slog.String("listen", c.Listen),
		slog.String("advertise", c.Advertise),
		slog.String("app_ports", c.AppPortRange.String()),
		slog.Duration("heartbeat_interval", c.HeartbeatInterval),
		slog.Duration("register_interval", c.RegisterInterval),
		slog.Duration("stop_grace", c.StopGrace),
		slog.String("cpu_override", c.CPU.String()),
		slog.Int64("memory_override", c.MemoryBytes),
		slog.String("kernel_userns", c.UserNS),
		slog.String("kernel_idmap", idMapString(c.idMap())),
		slog.Any("kernel_capabilities", c.Capabilities),
		slog.Duration("terminal_detach_timeout", c.TerminalDetachTimeout),
		slog.Int("terminal_scrollback", c.TerminalScrollback),
		slog.Int("terminals_per_kernel", c.TerminalsPerKernel),
		slog.Duration("terminal_ping_interval", c.TerminalPingInterval),
		slog.Duration("activity_interval", c.ActivityInterval),
		slog.Duration("gpu_idle_window", c.GPUIdleWindow),
		slog.Int("gpu_idle_threshold", c.GPUIdleThreshold),
	)
}

// idMapString shows a mapping as host id+size, or "none".
func idMapString(m *runtime.IDMap) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("%d+%d", m.HostID, m.Size)
}

// redactURL hides the user information (a password or a token) of a
// comma-separated list of URLs.
func redactURL(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case err != nil:
			parts[i] = "(unparsable URL)"
		case u.User != nil:
			u.User = url.User("xxxxx")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
