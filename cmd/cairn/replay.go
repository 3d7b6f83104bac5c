package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/progress"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
)

func newReplayCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay the event log: rebuild read models, replay and verify the audit trail",
		Long: `replay reads the event log from the start. "replay rebuild" drops read
models and rebuilds them from position 0; "replay audit" prints the audit
trail and verifies its hash chain. Both show a progress bar (a log line
every few seconds when the output is not a terminal).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newReplayRebuildCommand(), newReplayAuditCommand())
	return cmd
}

// storeFlags are the flags that name the event store, as in "cairn dev".
type storeFlags struct {
	dataDir string
	store   string
}

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", devserver.DefaultDataDir, "directory of the SQLite store (as for cairn dev)")
	cmd.Flags().StringVar(&f.store, "store", "", "event store DSN (sqlite:///path/cairn.db or postgres://...); default: SQLite in --data-dir")
}

// dsn is the store's DSN. The default SQLite store must exist already:
// replaying a store that is not there would only create an empty one.
func (f *storeFlags) dsn() (string, error) {
	if f.store != "" {
		return f.store, nil
	}
	path := filepath.Join(f.dataDir, "cairn.db")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no event store in --data-dir %s (%w); name one with --store", f.dataDir, err)
	}
	return "sqlite://" + path, nil
}

func newReplayRebuildCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "rebuild [read model...]",
		Short: "Drop read models and rebuild them from the event log",
		Long: `rebuild drops the named read models (all of them when none is named),
recreates their tables and replays the whole event log into them. Writers
may keep appending meanwhile: a running server's projectors notice the reset
and take over where the rebuild ends. Read models: ` + strings.Join(readmodels.Names(), ", ") + `.`,
		Example: `  cairn replay rebuild
  cairn replay rebuild sessions --store postgres://cairn@db/cairn`,
		RunE: func(cmd *cobra.Command, names []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			dsn, err := sf.dsn()
			if err != nil {
				return err
			}
			return rebuild(ctx, dsn, names)
		},
	}
	sf.register(cmd)
	return cmd
}

func rebuild(ctx context.Context, dsn string, names []string) (err error) {
	if err := readmodels.CheckNames(names); err != nil {
		return err
	}
	store, db, err := readmodels.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	selected, err := readmodels.New(db, store).Select(names)
	if err != nil {
		return err
	}
	for _, rm := range selected {
		p, err := projections.NewProjector(db, store, rm, projections.Options{Logger: slog.Default()})
		if err != nil {
			return err
		}
		bar := progress.New("rebuild "+rm.Name(), progress.Options{})
		err = p.Rebuild(ctx, bar.Update)
		bar.Finish(err)
		if err != nil {
			return fmt.Errorf("rebuild %s: %w", rm.Name(), err)
		}
	}
	return nil
}
