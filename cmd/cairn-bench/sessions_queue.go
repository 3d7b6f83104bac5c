package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/apibench"
)

type benchQueueConfig struct {
	PostgresURL string
	Append      string
	CPUProfile  string
	HeapProfile string
	Bench       apibench.EnqueueConfig
}

func newBenchSessionsQueueCommand() *cobra.Command {
	cfg := benchQueueConfig{Bench: apibench.DefaultEnqueueConfig()}
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Benchmark POST /v1/sessions (signed, audit on) with an empty queue and long ones",
		Long: `queue starts a cairn dev in this process (no local agent, so every session stays
PENDING; SQLite in a temporary directory, or a fresh PostgreSQL schema with
--postgres-url) and provisions a user with a keypair through the API. Then
--clients concurrent clients (in this process: the load generator shares the
cores) send strict-mode signed POST /v1/sessions to the API as cairn dev
serves it (every request recorded in the audit trail), over keep-alive
connections: for each queue length of --queues, the user's queue is filled up
to it (unmeasured), then a round of --duration is measured. It reports
requests/s and client-side p50/p99 per round and issue #17's targets:
>= 2000 req/s, p99 <= 50 ms, and the rate at the longest queue within 20% of
the rate at the shortest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Bench.Validate(); err != nil {
				return err
			}
			return runBenchQueue(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	b := &cfg.Bench
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "measure on this PostgreSQL server (a fresh schema, dropped afterwards) instead of SQLite")
	f.StringVar(&cfg.Append, "append", "", "append the table as Markdown to this file (e.g. docs/benchmarks.md)")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile of the round at the longest queue to this file")
	f.StringVar(&cfg.HeapProfile, "heap-profile", "", "write a heap profile (live objects, after a collection) taken before the round at the longest queue to this file: what a queue holds in memory")
	f.IntVar(&b.Clients, "clients", b.Clients, "concurrent clients, each on a keep-alive connection")
	f.DurationVar(&b.Duration, "duration", b.Duration, "length of the measured round at each queue length")
	f.IntSliceVar(&b.Queues, "queues", b.Queues, "queue lengths (pending sessions) to measure at, ascending")
	f.DurationVar(&b.Settle, "settle", b.Settle, "pause after filling the queue, before its round")
	return cmd
}

func runBenchQueue(ctx context.Context, cfg benchQueueConfig) (err error) {
	backend := "sqlite"
	if cfg.PostgresURL != "" {
		backend = "postgres"
	}
	dir, err := os.MkdirTemp("", "cairn-bench-queue-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			slog.Warn("remove the benchmark's data directory", "dir", dir, "error", rerr)
		}
	}()
	sc := apibench.ServerConfig{DataDir: dir}
	if backend == "postgres" {
		schema, drop, err := benchSchema(ctx, cfg.PostgresURL)
		if err != nil {
			return err
		}
		defer drop()
		if sc.Store, err = withSchema(cfg.PostgresURL, schema); err != nil {
			return err
		}
	}
	loadBefore := apibench.LoadAverage()
	slog.Info("queue benchmark: starting cairn dev", "backend", backend, "data_dir", dir)
	srv, err := apibench.StartServer(ctx, sc)
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop the server: %w", serr))
		}
	}()
	b := cfg.Bench
	b.Progress = func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }
	if cfg.CPUProfile != "" || cfg.HeapProfile != "" {
		b.ProfileLast = func() func() {
			if cfg.HeapProfile != "" {
				if err := heapProfile(cfg.HeapProfile); err != nil {
					slog.Warn("no heap profile", "err", err)
				}
			}
			if cfg.CPUProfile != "" {
				return cpuProfile(cfg.CPUProfile)
			}
			return func() {}
		}
	}
	rounds, err := apibench.RunEnqueue(ctx, srv, b)
	if err != nil {
		return err
	}
	loadAfter := apibench.LoadAverage()
	fmt.Printf("\n%s (load average %s before, %s after)\n", backend, loadBefore, loadAfter)
	if err := apibench.WriteEnqueueTable(os.Stdout, rounds); err != nil {
		return err
	}
	if cfg.Append == "" {
		return nil
	}
	var md bytes.Buffer
	header := fmt.Sprintf("\n## Requesting sessions with a growing queue (%s)\n\n"+
		"Made by `cairn-bench sessions queue` on %s, %s, %d CPUs, %s; load average %s before, %s after (1, 5, 15 min;\n"+
		"the machine is shared). A `cairn dev` in the benchmark's process (%s, no local agent: every session stays\n"+
		"PENDING) serves the API as `cairn dev` does, audit trail on. %d clients in the same process send strict-mode\n"+
		"signed `POST /v1/sessions` (one kernel, 1 CPU) of one user over keep-alive connections; before each round the\n"+
		"user's queue is filled to the round's starting length (unmeasured), then %s are measured. Latencies are the\n"+
		"clients' (signing to last byte read). Targets (issue #17): ≥ %d req/s, p99 ≤ %s, rate at the longest queue\n"+
		"within %.0f%% of the rate at the shortest.",
		backend, time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		loadBefore, loadAfter, backendDescription(backend), b.Clients, b.Duration,
		apibench.TargetEnqueuePerSecond, apibench.TargetEnqueueP99, (1-apibench.TargetEnqueueFlat)*100)
	if err := apibench.WriteEnqueueMarkdown(&md, rounds, header); err != nil {
		return err
	}
	return appendFile(cfg.Append, md.Bytes())
}
