package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/storebench"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
)

type benchStoreConfig struct {
	Backends     []string
	PostgresURL  string
	Out          string
	Duration     time.Duration
	ReplayEvents int
	LagRate      int
	LagDuration  time.Duration
	Writers      int
	Rounds       int
	Scenarios    []string
}

func (c benchStoreConfig) Validate() error {
	var errs []error
	for _, b := range c.Backends {
		if b != "sqlite" && b != "postgres" {
			errs = append(errs, fmt.Errorf("--backends: unknown backend %q (sqlite, postgres)", b))
		}
		if b == "postgres" && c.PostgresURL == "" {
			errs = append(errs, errors.New("--postgres-url (or CAIRN_TEST_POSTGRES_URL) is required for the postgres backend; `make bench` starts a throwaway server"))
		}
	}
	if c.Duration <= 0 || c.LagDuration <= 0 {
		errs = append(errs, errors.New("--duration and --lag-duration must be positive"))
	}
	if c.ReplayEvents <= 0 || c.LagRate <= 0 || c.Writers <= 0 || c.Rounds <= 0 {
		errs = append(errs, errors.New("--replay-events, --lag-rate, --writers and --rounds must be positive"))
	}
	if err := (storebench.Config{Scenarios: c.Scenarios}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--scenarios: %w", err))
	}
	return errors.Join(errs...)
}

func newBenchStoreCommand() *cobra.Command {
	def := storebench.DefaultConfig()
	cfg := benchStoreConfig{}
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Benchmark the event store backends: appends/s, replay events/s, subscription lag",
		Long: `store measures, for each backend, appends/s (1 writer x 1 event, N concurrent
writers x 1 event, batches of 100), ReadAll replay events/s, and subscription
lag at a fixed append rate, each next to a raw baseline measured in the same
run on the same database (plain INSERTs of the same row shape at the same
concurrency; a plain ordered SELECT scan), and the ratio.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.PostgresURL == "" {
				cfg.PostgresURL = os.Getenv("CAIRN_TEST_POSTGRES_URL")
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			return runBenchStore(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Backends, "backends", []string{"sqlite", "postgres"}, "backends to measure")
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "PostgreSQL server to benchmark on (default: CAIRN_TEST_POSTGRES_URL); a fresh schema is created and dropped")
	f.StringVar(&cfg.Out, "out", "", "also write the table as Markdown to this file")
	f.DurationVar(&cfg.Duration, "duration", def.Duration, "duration of each append scenario")
	f.IntVar(&cfg.ReplayEvents, "replay-events", def.ReplayEvents, "events read by the replay scenario")
	f.IntVar(&cfg.LagRate, "lag-rate", def.LagRate, "appends per second during the lag scenario")
	f.DurationVar(&cfg.LagDuration, "lag-duration", def.LagDuration, "duration of the lag scenario")
	f.IntVar(&cfg.Writers, "writers", def.Writers, "concurrent writers of the concurrent scenario")
	f.IntVar(&cfg.Rounds, "rounds", def.Rounds, "alternating Cairn and raw runs each append scenario is split into")
	f.StringSliceVar(&cfg.Scenarios, "scenarios", nil, "run only these scenarios ("+strings.Join(storebench.Scenarios(), ", ")+"); default: all")
	return cmd
}

func runBenchStore(ctx context.Context, cfg benchStoreConfig) error {
	bc := storebench.Config{
		Duration: cfg.Duration, ReplayEvents: cfg.ReplayEvents,
		LagRate: cfg.LagRate, LagDuration: cfg.LagDuration, Writers: cfg.Writers,
		Rounds: cfg.Rounds, Scenarios: cfg.Scenarios,
		Progress: func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) },
	}
	var all []storebench.Result
	for _, backend := range cfg.Backends {
		var results []storebench.Result
		var err error
		switch backend {
		case "sqlite":
			results, err = benchSQLite(ctx, bc)
		case "postgres":
			results, err = benchPostgres(ctx, cfg.PostgresURL, bc)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		all = append(all, results...)
	}
	fmt.Println()
	if err := storebench.WriteTable(os.Stdout, all, cfg.Writers); err != nil {
		return err
	}
	if cfg.Out == "" {
		return nil
	}
	var buf bytes.Buffer
	header := fmt.Sprintf("# Event store benchmarks\n\n"+
		"`make bench` builds `bin/cairn-bench` (the benchmarks' own binary: `cairn` carries none of them) and runs its\n"+
		"commands `store`, `schedule` and `api` against a throwaway PostgreSQL, then `sessions` on Podman; each appends\n"+
		"its section below. Run one alone with `bin/cairn-bench <command> --help` for its flags.\n\n"+
		"Made by `make bench` (`cairn-bench store %s`) on %s, %s, %d CPUs, %s.\n"+
		"Each Cairn figure sits next to a raw baseline measured in the same run on the same database:\n"+
		"plain INSERTs of the same row shape at the same concurrency (one transaction per append), and a plain\n"+
		"ordered keyset SELECT scan. Lag rows compare append→delivered with the append call's own latency.\n"+
		"The machines are shared and noisy: read the ratios, not the absolute figures.",
		strings.Join(os.Args[2:], " "), time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	if err := storebench.WriteMarkdown(&buf, all, cfg.Writers, header); err != nil {
		return err
	}
	return os.WriteFile(cfg.Out, buf.Bytes(), 0o644)
}

func benchSQLite(ctx context.Context, bc storebench.Config) ([]storebench.Result, error) {
	dir, err := os.MkdirTemp("", "cairn-bench-sqlite-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cairn.db")
	store, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	base, err := storebench.NewSQLiteBaseline(path, "FULL")
	if err != nil {
		return nil, err
	}
	defer base.Close()
	return storebench.Run(ctx, "sqlite", store, base, bc)
}

func benchPostgres(ctx context.Context, url string, bc storebench.Config) ([]storebench.Result, error) {
	schema, drop, err := benchSchema(ctx, url)
	if err != nil {
		return nil, err
	}
	defer drop()
	store, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	base, err := storebench.NewPostgresBaseline(ctx, url, schema, int32(bc.Writers+4))
	if err != nil {
		return nil, err
	}
	defer base.Close()
	var s eventstore.Store = store
	return storebench.Run(ctx, "postgres", s, base, bc)
}

// benchSchema creates a fresh schema bench_<random> for a benchmark on
// the PostgreSQL server at url; drop removes it with all it holds.
func benchSchema(ctx context.Context, url string) (schema string, drop func(), err error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema = "bench_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", nil, err
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(context.Background())
		return "", nil, err
	}
	return schema, func() {
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			slog.Warn("drop benchmark schema", "schema", schema, "err", err)
		}
		conn.Close(context.Background())
	}, nil
}
