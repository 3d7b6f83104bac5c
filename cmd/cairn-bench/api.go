package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/apibench"
)

type benchAPIConfig struct {
	Backends      []string
	PostgresURL   string
	Append        string
	CPUProfile    string
	AllocsProfile string
	Bench         apibench.Config
}

func (c benchAPIConfig) Validate() error {
	var errs []error
	for _, b := range c.Backends {
		switch {
		case b != "sqlite" && b != "postgres":
			errs = append(errs, fmt.Errorf("--backends: unknown backend %q (sqlite, postgres)", b))
		case b == "postgres" && c.PostgresURL == "":
			errs = append(errs, errors.New("--postgres-url (or CAIRN_TEST_POSTGRES_URL) is required for the postgres backend; `make bench` starts a throwaway server"))
		}
	}
	return errors.Join(append(errs, c.Bench.Validate())...)
}

func newBenchAPICommand() *cobra.Command {
	cfg := benchAPIConfig{Bench: apibench.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Benchmark the HTTP API: signed requests/s with p50/p99, audit trail on vs off",
		Long: `api starts a cairn dev in this process (no local agent; SQLite in a temporary
directory, or a fresh PostgreSQL schema) serving the API twice: as cairn dev
does, every request recorded in the audit trail (access-log middleware,
writer, sequencer), and without the access-log middleware. It provisions a
user with a keypair through the API, then --clients concurrent clients (in
this process: the load generator shares the cores) send signed GETs
(Cairn's strict mode; --compat-signing for Backend.AI's) of --path over keep-alive connections, in rounds of --duration that
alternate between the two. It reports requests/s and client-side p50/p99
per mode, the access records appended and sealed per second, how long the
sequencer took to seal a round's last record, and issue #4's targets:
>= 5000 signed req/s with the audit on, p99 <= 20 ms, on/off >= 0.8.

Backends: sqlite, and postgres when --postgres-url or CAIRN_TEST_POSTGRES_URL
is set (unless --backends says otherwise).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.PostgresURL == "" {
				cfg.PostgresURL = os.Getenv("CAIRN_TEST_POSTGRES_URL")
			}
			if len(cfg.Backends) == 0 {
				cfg.Backends = []string{"sqlite"}
				if cfg.PostgresURL != "" {
					cfg.Backends = append(cfg.Backends, "postgres")
				}
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			return runBenchAPI(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	b := &cfg.Bench
	f.StringSliceVar(&cfg.Backends, "backends", nil, "backends to measure (default: sqlite, and postgres when a PostgreSQL URL is set)")
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "PostgreSQL server to benchmark on (default: CAIRN_TEST_POSTGRES_URL); a fresh schema is created and dropped")
	f.StringVar(&cfg.Append, "append", "", "append the tables as Markdown to this file (e.g. docs/benchmarks.md)")
	f.IntVar(&b.Clients, "clients", b.Clients, "concurrent clients, each on a keep-alive connection")
	f.DurationVar(&b.Duration, "duration", b.Duration, "length of each measured round")
	f.IntVar(&b.Rounds, "rounds", b.Rounds, "measured rounds per mode (audit on, audit off), alternating")
	f.DurationVar(&b.Warmup, "warmup", b.Warmup, "unmeasured round per mode before the measured ones")
	f.StringVar(&b.Path, "path", b.Path, "route to GET (a cheap authenticated one)")
	f.BoolVar(&b.CompatSigning, "compat-signing", false, "sign as Backend.AI's clients do instead of in Cairn's strict mode (body hash, nonce, replay cache)")
	f.DurationVar(&b.CatchUp, "catch-up", b.CatchUp, "longest wait for the sequencer to seal a round's records")
	f.DurationVar(&b.Settle, "settle", b.Settle, "pause after each round")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write CPU profiles of the first measured round of each mode to PREFIX-<backend>-on.pprof and PREFIX-<backend>-off.pprof")
	f.StringVar(&cfg.AllocsProfile, "allocs-profile", "", "write the process's allocation profile as the first measured round of each mode starts and ends, to PREFIX-<backend>-<mode>-start.pprof and -end.pprof "+
		"(what the round allocated: go tool pprof -sample_index=alloc_space -diff_base=...-start.pprof ...-end.pprof)")
	return cmd
}

func runBenchAPI(ctx context.Context, cfg benchAPIConfig) error {
	cfg.Bench.Progress = func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }
	var md bytes.Buffer
	for _, backend := range cfg.Backends {
		loadBefore := apibench.LoadAverage()
		res, err := benchAPIOn(ctx, backend, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		loadAfter := apibench.LoadAverage()
		fmt.Printf("\n%s (load average %s before, %s after)\n", backend, loadBefore, loadAfter)
		if err := apibench.WriteTable(os.Stdout, res); err != nil {
			return err
		}
		b := cfg.Bench
		header := fmt.Sprintf("\n## HTTP API: signed requests and the audit trail (%s)\n\n"+
			"Made by `cairn-bench api` on %s, %s, %d CPUs, %s; load average %s before, %s after (1, 5, 15 min).\n"+
			"A `cairn dev` in the benchmark's process (%s, no local agent) serves the API twice: as `cairn dev` does (audit on:\n"+
			"access-log middleware, writer, sequencer, every projector following the log) and without the access-log middleware\n"+
			"(audit off). %d clients in the same process (the load generator shares the %d cores) send %s-signed\n"+
			"`GET %s` over keep-alive connections, each signed anew, in %d measured rounds of %s per mode\n"+
			"alternating on/off, after %s of warm-up each. Latencies are the clients' (signing to last byte read), over every\n"+
			"request of the mode. CPU µs/req is the process's CPU time (server and clients) per request. Records: the access-log\n"+
			"writer's appends and the sequencer's seals during the rounds; max seal lag is how long after a round its last record\n"+
			"was sealed (every record is checked sealed). Targets (issue #4): ≥ %d signed req/s with the audit on, p99 ≤ %s, on/off ≥ %.1fx.\n"+
			"The machine is shared: read the ratio first.",
			backend, time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
			loadBefore, loadAfter, backendDescription(backend), b.Clients, runtime.NumCPU(), signingDescription(b.CompatSigning), b.Path, b.Rounds, b.Duration, b.Warmup,
			apibench.TargetPerSecond, apibench.TargetP99, apibench.TargetRatio)
		if err := apibench.WriteMarkdown(&md, res, header); err != nil {
			return err
		}
	}
	if cfg.Append == "" {
		return nil
	}
	return appendFile(cfg.Append, md.Bytes())
}

func backendDescription(backend string) string {
	if backend == "postgres" {
		return "PostgreSQL, a fresh schema"
	}
	return "SQLite in a temporary directory"
}

// benchAPIOn starts the server on backend, runs the benchmark and stops
// the server.
func benchAPIOn(ctx context.Context, backend string, cfg benchAPIConfig) (res apibench.Result, err error) {
	dir, err := os.MkdirTemp("", "cairn-bench-api-")
	if err != nil {
		return res, err
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
			return res, err
		}
		defer drop()
		if sc.Store, err = withSchema(cfg.PostgresURL, schema); err != nil {
			return res, err
		}
	}
	slog.Info("API benchmark: starting cairn dev", "backend", backend, "data_dir", dir)
	srv, err := apibench.StartServer(ctx, sc)
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop the server: %w", serr))
		}
	}()
	slog.Info("API benchmark: serving", "audited", srv.AuditedURL, "unaudited", srv.UnauditedURL, "access_key", srv.User.AccessKey)
	if cfg.CPUProfile != "" || cfg.AllocsProfile != "" {
		cfg.Bench.Profile = func(m apibench.Mode) func() {
			mode := strings.TrimPrefix(m.String(), "audit ")
			stopCPU, stopAllocs := func() {}, func() {}
			if cfg.AllocsProfile != "" {
				stopAllocs = allocsProfile(fmt.Sprintf("%s-%s-%s", cfg.AllocsProfile, backend, mode))
			}
			if cfg.CPUProfile != "" {
				stopCPU = cpuProfile(fmt.Sprintf("%s-%s-%s.pprof", cfg.CPUProfile, backend, mode))
			}
			return func() { stopCPU(); stopAllocs() }
		}
	}
	return apibench.Run(ctx, srv, cfg.Bench)
}

// cpuProfile starts a CPU profile into path; stop ends it. A profile that
// cannot be written is logged, not fatal.
func cpuProfile(path string) (stop func()) {
	f, err := os.Create(path)
	if err != nil {
		slog.Warn("cpu profile", "path", path, "error", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		slog.Warn("cpu profile", "path", path, "error", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			slog.Warn("cpu profile", "path", path, "error", err)
		}
		slog.Info("cpu profile written", "path", path)
	}
}

// allocsProfile writes the allocation profile to prefix-start.pprof now
// and to prefix-end.pprof at stop: their difference is what was allocated
// in between. A profile that cannot be written is logged, not fatal.
func allocsProfile(prefix string) (stop func()) {
	write := func(path string) {
		f, err := os.Create(path)
		if err == nil {
			err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		}
		if err != nil {
			slog.Warn("allocation profile", "path", path, "error", err)
			return
		}
		slog.Info("allocation profile written", "path", path)
	}
	write(prefix + "-start.pprof")
	return func() { write(prefix + "-end.pprof") }
}

// withSchema adds Cairn's schema parameter to a PostgreSQL URL (see
// eventstore/dsn).
func withSchema(pgURL, schema string) (string, error) {
	u, err := url.Parse(pgURL)
	if err != nil {
		return "", fmt.Errorf("--postgres-url: %w", err)
	}
	if !strings.HasPrefix(u.Scheme, "postgres") {
		return "", fmt.Errorf("--postgres-url %q: want a postgres:// URL", u.Redacted())
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// signingDescription names the signing mode of the report's requests.
func signingDescription(compat bool) string {
	if compat {
		return "Backend.AI"
	}
	return "strict-mode (body hash, nonce, replay cache)"
}

// heapProfile writes the live heap (after a collection) to path.
func heapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	slog.Info("heap profile written", "path", path)
	return f.Close()
}
