package main

import (
	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Cairn — an event-sourced control plane for GPU compute clusters",
		Long: `Cairn schedules compute sessions (containers with CPU, memory, whole GPUs or
GPU slices) on agents that run them with Podman. Every state change is an
event in the event store; read models are projections of those events.

Every flag can also be set by an environment variable (--data-dir is
CAIRN_DATA_DIR, --log-level is CAIRN_LOG_LEVEL, and so on) or in a YAML file
named by --config (or CAIRN_CONFIG), keyed by flag name:

  listen: 0.0.0.0:8080
  store: postgres://cairn@db/cairn
  image: [localhost/team/pytorch:2.4]

The command line wins, then the environment, then the file.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newDevCommand(), newAgentCommand(), newProxyCommand(), newReplayCommand(), newBusCommand(), newAuditCommand())
	cli.Setup(root)
	return root
}
