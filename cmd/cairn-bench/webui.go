package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/apibench"
	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/webuibench"
	"github.com/cairnhq/cairn/infra/browsertest"
	"github.com/cairnhq/cairn/infra/images"
)

type benchWebUIConfig struct {
	Backends    []string
	PostgresURL string
	Append      string
	Sizes       []string
	UIDir       string
	CPUProfile  string
	Bench       webuibench.Config
}

func (c benchWebUIConfig) Validate() error {
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

// parseSizes reads "SESSIONS:FOLDERS" sizes.
func parseSizes(raw []string) ([]webuibench.Size, error) {
	var out []webuibench.Size
	var errs []error
	for _, r := range raw {
		s, f, ok := strings.Cut(r, ":")
		sessions, err1 := strconv.Atoi(s)
		folders, err2 := strconv.Atoi(f)
		if !ok || err1 != nil || err2 != nil {
			errs = append(errs, fmt.Errorf("--sizes: %q is not SESSIONS:FOLDERS", r))
			continue
		}
		out = append(out, webuibench.Size{Sessions: sessions, Folders: folders})
	}
	return out, errors.Join(errs...)
}

func newBenchWebUICommand() *cobra.Command {
	var cpuProfilePath string
	cfg := benchWebUIConfig{Bench: webuibench.Config{
		Loads: webuibench.DefaultLoads, Warmup: webuibench.DefaultWarmup, Changes: webuibench.DefaultChanges,
		Timeout: webuibench.DefaultTimeout, Image: images.BaseImage, Quiet: webuibench.DefaultQuiet,
	}}
	var sizes []string
	for _, s := range webuibench.DefaultSizes {
		sizes = append(sizes, fmt.Sprintf("%d:%d", s.Sessions, s.Folders))
	}
	cmd := &cobra.Command{
		Use:   "webui",
		Short: "Benchmark the Web-UI in Chromium: first page of Sessions and Data over a big store, queries per page, SSE delivery",
		Long: `webui starts a cairn dev in this process (no local agent: the sessions stay
PENDING; SQLite in a temporary directory, or a fresh PostgreSQL schema),
provisions five users in two domains through the API, each with one
session and one folder made through the API, and grows the store to each
of --sizes in turn (a small baseline first) with copies of those events,
appended while the server is stopped (through the API, creates slow down
as an owner's objects grow: 100,000 would take hours).
At each size, once the read models show the last write, Node drives
Debian's Chromium (web/ui/bench/webui.bench.mjs, playwright-core): logged
in as the user who owns nine in ten objects, it loads /sessions and /data
--loads times each (after --warmup loads), full navigations, and times
navigation start → the first row of the list painted; it counts each
load's API requests and the read-model queries the server ran for them
(cairn_readmodel_queries_total). Then, with /sessions open, it creates
--changes sessions one at a time from the page and times each create's
answer → its row in the page (the live stream), and the same to a bare
EventSource on /v1/events. Targets (issue #19): p95 <= 300 ms per page at
100,000 sessions and 10,000 folders, the same queries per page at every
size, SSE delivery p99 <= 250 ms.

Needs node, web/ui/node_modules and Chromium (scripts/install-browser.sh).
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
			var err error
			if cfg.Bench.Sizes, err = parseSizes(sizes); err != nil {
				return err
			}
			tools, missing := browsertest.Find(true)
			if len(missing) > 0 {
				return fmt.Errorf("the browser is not ready: %s (run scripts/install-browser.sh)", strings.Join(missing, "; "))
			}
			if cfg.UIDir != "" {
				tools.UIDir = cfg.UIDir
			}
			cfg.Bench.Tools = tools
			if err := cfg.Validate(); err != nil {
				return err
			}
			if cpuProfilePath != "" {
				cfg.Bench.ServerProfile = func() func() { return cpuProfile(cpuProfilePath) }
			}
			return runBenchWebUI(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	b := &cfg.Bench
	f.StringSliceVar(&cfg.Backends, "backends", nil, "backends to measure (default: sqlite, and postgres when a PostgreSQL URL is set)")
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "PostgreSQL server to benchmark on (default: CAIRN_TEST_POSTGRES_URL); a fresh schema is created and dropped")
	f.StringVar(&cfg.Append, "append", "", "append the tables as Markdown to this file (e.g. docs/benchmarks.md)")
	f.StringSliceVar(&sizes, "sizes", sizes, "store sizes SESSIONS:FOLDERS, growing; the first is the baseline")
	f.IntVar(&b.Loads, "loads", b.Loads, "measured loads of each page per size")
	f.IntVar(&b.Warmup, "warmup", b.Warmup, "unmeasured loads of each page before the measured ones")
	f.IntVar(&b.Changes, "changes", b.Changes, "sessions created one at a time to time the live stream, per target (page, bare EventSource)")
	f.DurationVar(&b.Timeout, "timeout", b.Timeout, "longest browser run per size")
	f.DurationVar(&b.Quiet, "quiet", b.Quiet, "how long the server must have appended nothing (every projector at the log's end) before the browser runs")
	f.StringVar(&cpuProfilePath, "browser-run-cpu-profile", "", "write a CPU profile of this process (the server; the browser is another) during the browser run at the largest size to this file")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile of the whole run (seeding and browser) to PREFIX-<backend>.pprof")
	f.StringVar(&cfg.UIDir, "ui-dir", "", "the Web-UI's Node project, with node_modules (default: web/ui of the source tree)")
	return cmd
}

func runBenchWebUI(ctx context.Context, cfg benchWebUIConfig) error {
	var md bytes.Buffer
	for _, backend := range cfg.Backends {
		loadBefore := apibench.LoadAverage()
		res, err := benchWebUIOn(ctx, backend, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		loadAfter := apibench.LoadAverage()
		fmt.Printf("\n%s (load average %s before, %s after)\n", backend, loadBefore, loadAfter)
		if err := webuibench.WriteTable(os.Stdout, res); err != nil {
			return err
		}
		b := cfg.Bench
		header := fmt.Sprintf("\n## Web-UI: first page over a big store, queries per page, live delivery (%s)\n\n"+
			"Made by `cairn-bench webui` on %s, %s, %d CPUs, %s; load average %s before, %s after (1, 5, 15 min).\n"+
			"A `cairn dev` in the benchmark's process (%s, no local agent: every session stays PENDING, as in a long queue;\n"+
			"the scheduler runs) is seeded: five users in two domains through its API, each with one session and one folder made\n"+
			"through the API (the real commands); the rest are copies of those events with fresh ids, names and times, appended\n"+
			"while the server is stopped (the folders' name claims decided by their owner's index, their directories made), nine\n"+
			"in ten owned by the measured user; the server restarts and its projectors build the read models from the log.\n"+
			"Each size in turn grows the same store. After the restart the scheduler records why each new session waits (one\n"+
			"`session.pending-updated` each, written once); the browser runs when every projector is at the log's end and nothing\n"+
			"was appended for %s. The scheduler keeps running: every session the SSE phase creates starts a round over the\n"+
			"whole queue (the server's CPU below). Debian's Chromium (playwright-core, web/ui/bench/webui.bench.mjs), logged in once as the\n"+
			"measured user, loads each page %d times (after %d warm-up loads): full navigations, the HTTP cache allowed. The time\n"+
			"is the page's own clock from navigation start to the animation frame after the first row of the list\n"+
			"(`table.list tbody tr`) entered the DOM (a MutationObserver installed before the app's script; \"rows in DOM\" is\n"+
			"the observer's own time). API requests are the page's `/v1` requests of a load (the EventSource included);\n"+
			"read-model queries are the server's `cairn_readmodel_queries_total` (every read statement on the read models'\n"+
			"database outside the projectors' batches) before and after the load, once every request of it was answered.\n"+
			"SSE delivery: with /sessions open, %d sessions created one at a time by a fetch in the page, each timed from the\n"+
			"create's answer to its row appearing (a MutationObserver; one clock); the baseline is the same on a bare\n"+
			"EventSource of `/v1/events` in a page of the same origin. Targets (issue #19): p95 ≤ 300 ms per page at 100,000\n"+
			"sessions and 10,000 folders, the same queries per page at every size, SSE delivery to the page p99 ≤ 250 ms.\n"+
			"The machine is shared: read the ratios first.",
			backend, time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
			loadBefore, loadAfter, backendDescription(backend), b.Quiet, b.Loads, b.Warmup, b.Changes)
		if err := webuibench.WriteMarkdown(&md, res, header); err != nil {
			return err
		}
	}
	if cfg.Append == "" {
		return nil
	}
	return appendFile(cfg.Append, md.Bytes())
}

// benchWebUIOn starts the server on backend, runs the benchmark and stops
// the server.
func benchWebUIOn(ctx context.Context, backend string, cfg benchWebUIConfig) (webuibench.Result, error) {
	dir, err := os.MkdirTemp("", "cairn-bench-webui-")
	if err != nil {
		return webuibench.Result{}, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			slog.Warn("remove the benchmark's data directory", "dir", dir, "error", rerr)
		}
	}()
	sc := webuibench.ServerConfig{DataDir: dir}
	if backend == "postgres" {
		schema, drop, err := benchSchema(ctx, cfg.PostgresURL)
		if err != nil {
			return webuibench.Result{}, err
		}
		defer drop()
		if sc.Store, err = withSchema(cfg.PostgresURL, schema); err != nil {
			return webuibench.Result{}, err
		}
	}
	if cfg.CPUProfile != "" {
		defer cpuProfile(fmt.Sprintf("%s-%s.pprof", cfg.CPUProfile, backend))()
	}
	slog.Info("web-UI benchmark: starting cairn dev", "backend", backend, "data_dir", dir)
	return webuibench.Run(ctx, sc, cfg.Bench)
}
