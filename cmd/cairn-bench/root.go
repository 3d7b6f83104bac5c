package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/config"
	"github.com/cairnhq/cairn/infra/logging"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCommand() *cobra.Command {
	var logCfg logging.Config
	root := &cobra.Command{
		Use:   "cairn-bench",
		Short: "Run Cairn's benchmarks against raw baselines measured in the same run",
		Long: `cairn-bench measures Cairn next to raw baselines measured in the same run on
the same machine, and reports the ratios against the targets:

  store     the event store backends: appends/s, replay events/s, subscription lag
  schedule  scheduling end to end: placements/s until visible in the read side
  api       the HTTP API: signed requests/s with p50/p99, audit trail on vs off
  sessions  session start latency (POST → RUNNING visible) against bare podman run

"make bench" runs all four against a throwaway PostgreSQL and writes
docs/benchmarks.md. Every flag can also be set by an environment variable:
--postgres-url is CAIRN_POSTGRES_URL, --log-level is CAIRN_LOG_LEVEL, and so
on. Flags win.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := config.BindEnv(cmd.Flags()); err != nil {
				return err
			}
			logger, err := logging.New(os.Stderr, logCfg)
			if err != nil {
				return err
			}
			slog.SetDefault(logger)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logCfg.Level, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logCfg.Format, "log-format", "text", "log format: text or json")
	root.AddCommand(newBenchStoreCommand(), newBenchSessionsCommand(), newBenchScheduleCommand(), newBenchAPICommand())
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
