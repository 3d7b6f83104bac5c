package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/schedbench"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/readmodels"
)

// scheduleTarget is issue #5's end-to-end target, placements/s.
const scheduleTarget = 5000

type benchScheduleConfig struct {
	Backends    []string
	PostgresURL string
	Append      string
	CPUProfile  string
	Bench       schedbench.Config
}

func newBenchScheduleCommand() *cobra.Command {
	cfg := benchScheduleConfig{Bench: schedbench.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Benchmark scheduling end to end: placements/s until visible in the read side",
		Long: `schedule registers a fleet (--agents, 8 GPUs each: whole, shareable or
MIG-enabled) and requests a queue (--sessions, more than the fleet holds)
through the command handlers, then runs the real scheduler loop and measures
placements per second from its start (folding the log included) until the
sessions read model shows every placement, on each backend.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.PostgresURL == "" {
				cfg.PostgresURL = os.Getenv("CAIRN_TEST_POSTGRES_URL")
			}
			var errs []error
			for _, b := range cfg.Backends {
				switch {
				case b != "sqlite" && b != "postgres":
					errs = append(errs, fmt.Errorf("--backends: unknown backend %q (sqlite, postgres)", b))
				case b == "postgres" && cfg.PostgresURL == "":
					errs = append(errs, errors.New("--postgres-url (or CAIRN_TEST_POSTGRES_URL) is required for the postgres backend; `make bench` starts a throwaway server"))
				}
			}
			if cfg.Bench.Agents <= 0 || cfg.Bench.Sessions <= 0 {
				errs = append(errs, errors.New("--agents and --sessions must be positive"))
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			return runBenchSchedule(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Backends, "backends", []string{"sqlite", "postgres"}, "backends to measure")
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "PostgreSQL server to benchmark on (default: CAIRN_TEST_POSTGRES_URL); a fresh schema is created and dropped")
	f.StringVar(&cfg.Append, "append", "", "also append the table as Markdown to this file")
	f.IntVar(&cfg.Bench.Agents, "agents", cfg.Bench.Agents, "agents in the fleet (8 GPUs each)")
	f.IntVar(&cfg.Bench.Sessions, "sessions", cfg.Bench.Sessions, "pending sessions")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile of each backend's measured phase to PREFIX-<backend>.pprof")
	f.DurationVar(&cfg.Bench.Timeout, "timeout", cfg.Bench.Timeout, "bound on each backend's run")
	return cmd
}

func runBenchSchedule(ctx context.Context, cfg benchScheduleConfig) error {
	cfg.Bench.Progress = func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }
	type row struct {
		backend string
		res     schedbench.Result
	}
	var rows []row
	for _, backend := range cfg.Backends {
		slog.Info("schedule benchmark", "backend", backend, "agents", cfg.Bench.Agents, "sessions", cfg.Bench.Sessions)
		var res schedbench.Result
		var err error
		cfg.Bench.Profile = nil
		if cfg.CPUProfile != "" {
			path := fmt.Sprintf("%s-%s.pprof", cfg.CPUProfile, backend)
			cfg.Bench.Profile = func() func() { return cpuProfile(path) }
		}
		switch backend {
		case "sqlite":
			res, err = benchScheduleSQLite(ctx, cfg.Bench)
		case "postgres":
			res, err = benchSchedulePostgres(ctx, cfg.PostgresURL, cfg.Bench)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		rows = append(rows, row{backend, res})
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "\n## Scheduling end to end\n\nMade by `cairn-bench schedule` on %s, %s, %d CPUs: %d agents × 8 GPUs, %d pending sessions,\n"+
		"requested through the command handlers; the real scheduler loop from its start (log fold included) until the\n"+
		"sessions read model shows every placement. Target: ≥ %d placements/s.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), cfg.Bench.Agents, cfg.Bench.Sessions, scheduleTarget)
	fmt.Fprintln(&md, "| backend | placed | rounds | schedule (s) | cpu (s) | placements/s | enqueue (sessions/s) | target |")
	fmt.Fprintln(&md, "|---|---:|---:|---:|---:|---:|---:|---|")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nBACKEND\tPLACED\tROUNDS\tSCHEDULE\tCPU\tPLACEMENTS/S\tENQUEUE/S\tTARGET")
	for _, r := range rows {
		ok := "✓"
		if r.res.PlacementsPerSecond() < scheduleTarget {
			ok = "✗"
		}
		enq := float64(r.res.Sessions) / r.res.Enqueue.Seconds()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2fs\t%.2fs\t%.0f\t%.0f\t≥ %d %s\n", r.backend, r.res.Placed, r.res.Rounds, r.res.Schedule.Seconds(), r.res.CPU.Seconds(), r.res.PlacementsPerSecond(), enq, scheduleTarget, ok)
		fmt.Fprintf(&md, "| %s | %d | %d | %.2f | %.2f | %.0f | %.0f | ≥ %d %s |\n", r.backend, r.res.Placed, r.res.Rounds, r.res.Schedule.Seconds(), r.res.CPU.Seconds(), r.res.PlacementsPerSecond(), enq, scheduleTarget, ok)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if cfg.Append == "" {
		return nil
	}
	return appendFile(cfg.Append, md.Bytes())
}

func benchScheduleSQLite(ctx context.Context, cfg schedbench.Config) (schedbench.Result, error) {
	dir, err := os.MkdirTemp("", "cairn-bench-schedule-")
	if err != nil {
		return schedbench.Result{}, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "cairn.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		return schedbench.Result{}, err
	}
	defer store.Close()
	db, err := readmodels.OpenSQLite(store, sqlite.Options{})
	if err != nil {
		return schedbench.Result{}, err
	}
	defer db.Close()
	return schedbench.Run(ctx, store, db, cfg)
}

func benchSchedulePostgres(ctx context.Context, url string, cfg schedbench.Config) (schedbench.Result, error) {
	schema, drop, err := benchSchema(ctx, url)
	if err != nil {
		return schedbench.Result{}, err
	}
	defer drop()
	store, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, Logger: slog.New(slog.DiscardHandler), MaxConns: 48})
	if err != nil {
		return schedbench.Result{}, err
	}
	defer store.Close()
	db, err := readmodels.NewPostgres(store.Pool(), store.Schema())
	if err != nil {
		return schedbench.Result{}, err
	}
	return schedbench.Run(ctx, store, db, cfg)
}
