package main

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
)

// agentFlags are the flags of `cairn agent` that are not node.Config
// fields as they are.
type agentFlags struct {
	cpus   string
	memory string
}

func newAgentCommand() *cobra.Command {
	var (
		cfg   node.Config
		flags agentFlags
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a node agent: run the kernels the manager places on this machine in Podman",
		Long: `agent runs Cairn's node agent. It discovers this machine's capacity (CPUs and
memory, GPUs through NVML with --gpus nvml, or go-nvml's mock servers with
--gpus mock:dgxh100), registers with the manager over the bus (--bus, the
NATS server of "cairn dev" or of the cluster), and runs the kernels placed on
it as Podman containers (--podman), reporting their progress and exit.

Its topic is cairn.agent.<agent id>, consumed as the durable consumer
agent-<agent id>; the id must stay the same across restarts. Stopping the
agent (Ctrl-C, SIGTERM) leaves every container running: at its next start it
adopts the containers labelled with its id. --data-dir keeps its records of
accepted commands and the logs of removed kernels.

Kernels run with no-new-privileges, only --kernel-capabilities, nosuid and
nodev mounts, and by default in a private user namespace: their root is host
id --kernel-userns-host-id, and the agent gives each read-write mount to that
id before the kernel starts (files it does not own become the kernel root's).
The agent refuses to start when the host cannot do that; --kernel-userns=host
runs kernels' root as the host's root instead.

With --listen it serves, over HTTP and only to requests the manager's key
signed (the manager and the app proxy): the kernels' logs (GET
/kernels/<kernel id>/logs?tail=N&max_bytes=N), their apps
(/kernels/<kernel id>/apps/<container port>/<path>, proxied to the kernel's
service port) and their terminals: shells in a kernel, over a WebSocket, that
live on without a client for --terminal-detach-timeout, so a browser that lost
its connection attaches again to the same shell. --advertise is the URL the
manager reaches it at (default: from --listen, with this machine's host name).

A kernel's service ports (its image's, and the ports its session pre-opens)
are published on 127.0.0.1 only, on host ports the agent takes from
--app-ports (one kernel per host port, skipping ports something else holds);
nothing but the agent reaches them.

Its bus credentials: "cairn agent enroll" (a one-time token from a
superadmin) writes them to <data dir>/bus.creds and <data dir>/bus-ca.pem,
which the agent uses when --bus-credentials and --bus-ca are not given.`,
		Example: `  cairn agent --bus nats://manager:4222 --gpus nvml --listen 0.0.0.0:6001
  CAIRN_BUS=nats://127.0.0.1:4222 CAIRN_GPUS=mock:dgxh100 cairn agent --data-dir ./data/agent-2 --agent-id node-2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := flags.apply(&cfg); err != nil {
				return err
			}
			if err := enrolledFiles(&cfg); err != nil {
				return err
			}
			cfg.Version = version
			a, err := node.New(cfg, slog.Default())
			if err != nil {
				return err
			}
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.AgentID, "agent-id", defaultAgentID(), "agent id: ASCII letters, digits, '-' and '_', stable across restarts")
	f.StringVar(&cfg.BusURL, "bus", "", "NATS server of the manager's bus, nats://host:4222 (required)")
	f.StringVar(&cfg.BusCredentialsFile, "bus-credentials", "", "the agent's NATS .creds file (default: <data dir>/bus.creds when it exists, as cairn agent enroll writes it; cairn bus agent-credentials issues one offline)")
	f.StringVar(&cfg.BusCAFile, "bus-ca", "", "CA certificate (PEM) that signed the bus server's TLS certificate (default: <data dir>/bus-ca.pem when it exists; cairn dev: <data dir>/bus-keys/bus-ca.pem)")
	f.StringVar(&cfg.PodmanURI, "podman", podman.DefaultURI, "Podman service URI (unix:///path, tcp://host:port, ssh://...)")
	f.StringVar(&cfg.GPUs, "gpus", node.DefaultGPUs, "GPU discovery: nvml, nvml:<library path>, none, or mock:<dgxa100|dgxh100|dgxh200|dgxb200>[?mig=...]")
	f.StringVar(&cfg.DataDir, "data-dir", "./data/agent", "directory for the agent's records and the logs of removed kernels")
	f.StringVar(&cfg.Listen, "listen", "", "address of the HTTP endpoint (kernel logs, terminals) the manager calls, host:port (default: none)")
	f.StringVar(&cfg.Advertise, "advertise", "", "base URL the manager reaches --listen at, http://host:port (default: derived from --listen)")
	cfg.AppPortRange = node.DefaultAppPortRange
	f.Var(&cfg.AppPortRange, "app-ports", "host ports (first-last) for kernels' service ports; published on 127.0.0.1 only and reached through the --listen endpoint")
	f.StringVar(&cfg.Architecture, "architecture", node.HostArchitecture(), "CPU architecture images must match")
	f.StringVar(&flags.cpus, "cpus", "", "CPU cores to offer, e.g. 6 or 7.5 (default: discovered)")
	f.StringVar(&flags.memory, "memory", "", "memory to offer, e.g. 48g (default: discovered)")
	f.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", node.DefaultHeartbeatInterval, "how often to send a heartbeat")
	f.DurationVar(&cfg.StopGrace, "stop-grace", 10*time.Second, "how long a kernel may take to exit after SIGTERM when it is destroyed")
	f.DurationVar(&cfg.TerminalDetachTimeout, "terminal-detach-timeout", node.DefaultTerminalDetachTimeout, "how long a terminal (a shell in a kernel, served on --listen) lives on without a client attached")
	f.IntVar(&cfg.TerminalScrollback, "terminal-scrollback", node.DefaultTerminalScrollback, "bytes of a terminal's latest output kept for a client that attaches again")
	f.IntVar(&cfg.TerminalsPerKernel, "terminals-per-kernel", node.DefaultTerminalsPerKernel, "the most terminals one kernel may have at a time")
	f.DurationVar(&cfg.TerminalPingInterval, "terminal-ping-interval", node.DefaultTerminalPingInterval, "how often a terminal's client is pinged (keeps idle connections through load balancers; a client that does not answer within it is dropped)")
	f.StringVar(&cfg.UserNS, "kernel-userns", node.UserNSPrivate, "user namespace of kernels: private (their root is host id --kernel-userns-host-id, unprivileged) or host (their root is the host's root)")
	f.Uint32Var(&cfg.UserNSHostID, "kernel-userns-host-id", runtime.DefaultIDMap.HostID, "with --kernel-userns=private: the host id kernels' root maps to (their id i is this + i); the same on every agent sharing storage")
	f.Uint32Var(&cfg.UserNSSize, "kernel-userns-size", runtime.DefaultIDMap.Size, "with --kernel-userns=private: how many ids kernels have (0 to size-1)")
	f.StringSliceVar(&cfg.Capabilities, "kernel-capabilities", slices.Clone(runtime.DefaultCapabilities), "the only capabilities kernels keep, e.g. CHOWN,SETUID (empty: none); every other one is dropped")
	cmd.AddCommand(newAgentEnrollCommand())
	return cmd
}

// apply parses the flags that need it into cfg.
func (f agentFlags) apply(cfg *node.Config) error {
	if f.cpus != "" {
		q, err := domain.ParseQuantity(f.cpus, domain.SlotCount)
		if err != nil {
			return fmt.Errorf("--cpus %q: %w", f.cpus, err)
		}
		cfg.CPU = q
	}
	if f.memory != "" {
		q, err := domain.ParseQuantity(f.memory, domain.SlotBytes)
		if err != nil {
			return fmt.Errorf("--memory %q: %w", f.memory, err)
		}
		cfg.MemoryBytes = q.Whole()
	}
	return nil
}

// defaultAgentID is this machine's host name as an agent id.
func defaultAgentID() string {
	name, err := os.Hostname()
	if err != nil {
		return ""
	}
	return node.SanitizeAgentID(name)
}
