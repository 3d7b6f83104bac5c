// Package cli holds what the root commands of Cairn's binaries (cairn,
// cairn-bench) share: the --log-level and --log-format flags, CAIRN_*
// environment variables for every flag, a --config file of flag values, the
// "(env CAIRN_X)" note in each flag's usage, and a main that stops on
// SIGINT/SIGTERM.
package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/config"
	"github.com/cairnhq/cairn/infra/logging"
)

// Setup gives root the log flags and --config and, before any command
// runs, binds every flag to its CAIRN_* variable and then to the --config
// file (the command line wins, then the environment) and sets the default
// logger,
// writing to the command's stderr. Call it once every command was added:
// it annotates their flags' usage too.
func Setup(root *cobra.Command) {
	var logCfg logging.Config
	var file string
	root.PersistentFlags().StringVar(&logCfg.Level, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logCfg.Format, "log-format", "text", "log format: text or json")
	root.PersistentFlags().StringVar(&file, config.FileFlag, "", "YAML file of flag values (flag names as keys, lists for repeatable flags); the command line and the environment win over it")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := config.BindEnv(cmd.Flags()); err != nil {
			return err
		}
		if file != "" {
			if err := config.BindFile(cmd.Flags(), file); err != nil {
				return err
			}
		}
		logger, err := logging.New(cmd.ErrOrStderr(), logCfg)
		if err != nil {
			return err
		}
		slog.SetDefault(logger)
		return nil
	}
	annotate(root)
}

// annotate adds "(env CAIRN_X)" to the usage of every flag of every command.
func annotate(cmd *cobra.Command) {
	config.AnnotateUsage(cmd.LocalFlags())
	config.AnnotateUsage(cmd.PersistentFlags())
	for _, sub := range cmd.Commands() {
		annotate(sub)
	}
}

// Main runs root until it ends or SIGINT/SIGTERM cancels its context, and
// exits with status 1 and "name: error" on stderr when it failed.
func Main(name string, root *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
