package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/config"
	"github.com/cairnhq/cairn/infra/logging"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCommand() *cobra.Command {
	var logCfg logging.Config
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Cairn — an event-sourced control plane for GPU compute clusters",
		Long: `Cairn schedules compute sessions (containers with CPU, memory, whole GPUs or
GPU slices) on agents that run them with Podman. Every state change is an
event in the event store; read models are projections of those events.

Every flag can also be set by an environment variable: --data-dir is
CAIRN_DATA_DIR, --log-level is CAIRN_LOG_LEVEL, and so on. Flags win.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := config.BindEnv(cmd.Flags()); err != nil {
				return err
			}
			logger, err := logging.New(cmd.ErrOrStderr(), logCfg)
			if err != nil {
				return err
			}
			slog.SetDefault(logger)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logCfg.Level, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logCfg.Format, "log-format", "text", "log format: text or json")
	root.AddCommand(newDevCommand(), newAgentCommand(), newReplayCommand(), newBusCommand())
	annotate(root)
	return root
}

// annotate adds "(env CAIRN_X)" to the usage of every flag of every command.
func annotate(cmd *cobra.Command) {
	config.AnnotateUsage(cmd.LocalFlags())
	config.AnnotateUsage(cmd.PersistentFlags())
	for _, sub := range cmd.Commands() {
		annotate(sub)
	}
}
