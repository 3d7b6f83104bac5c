package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/appbench"
	"github.com/cairnhq/cairn/infra/devserver"
)

type benchAppsConfig struct {
	Podman     string
	Append     string
	CPUProfile string
	Bench      appbench.Config
}

func (c benchAppsConfig) Validate() error {
	var errs []error
	if c.Podman == "" {
		errs = append(errs, errors.New("--podman: empty"))
	}
	return errors.Join(append(errs, c.Bench.Validate())...)
}

func newBenchAppsCommand() *cobra.Command {
	cfg := benchAppsConfig{Bench: appbench.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "apps",
		Short: "Benchmark the app proxy: HTTP and WebSocket through the proxy vs straight to the published port, POST → usable Jupyter, Jupyter's HTTP",
		Long: `apps starts a cairn dev in this process (SQLite in a temporary directory, the
local agent on --podman, its signed endpoint and the app proxy on loopback),
builds a static echo app (Go toolchain needed: run it from the repository),
uploads it into a folder and runs it in a session of the base image on a
pre-opened port. It then measures, in rounds that alternate which goes
first, the app through the proxy against the app's published host port:

  HTTP       --clients keep-alive clients GET a small and a 1 MiB answer:
             requests/s, p50, p99 (target: proxy >= 0.7x direct req/s)
  WebSocket  one socket sends a message and waits for its echo, --messages
             times per round: p50, p99 (target: added p99 <= 2 ms)
  Jupyter    POST /v1/sessions of --jupyter-image until the notebook's
             /api/status answers 200 through the proxy; then the HTTP
             measurement above of one of the notebook's static files
             (` + appbench.JupyterStaticPath + `, served
             without its token) through the proxy and straight to the
             jupyter port's host port: the echo app is the proxy's worst
             case, Jupyter the real app. When the image is absent the rows
             say so (scripts/build-images.sh builds it); when it is there
             but cannot be measured, the table is printed, nothing is
             appended and the command fails`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			return runBenchApps(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	b := &cfg.Bench
	f.StringVar(&cfg.Podman, "podman", devserver.DefaultPodman, "Podman service of the local agent")
	f.StringVar(&cfg.Append, "append", "", "append the table as Markdown to this file (e.g. docs/benchmarks.md)")
	f.IntVar(&b.Clients, "clients", b.Clients, "concurrent HTTP clients, each on a keep-alive connection")
	f.DurationVar(&b.Duration, "duration", b.Duration, "length of each measured HTTP round")
	f.IntVar(&b.Rounds, "rounds", b.Rounds, "measured rounds per way in (proxy, direct), alternating")
	f.DurationVar(&b.Warmup, "warmup", b.Warmup, "unmeasured HTTP round per way in before the measured ones")
	f.IntVar(&b.Messages, "messages", b.Messages, "WebSocket round trips per round")
	f.BoolVar(&b.Jupyter, "jupyter", b.Jupyter, "measure POST /v1/sessions → a usable Jupyter")
	f.StringVar(&b.JupyterImage, "jupyter-image", b.JupyterImage, "image whose jupyter service port is measured")
	f.DurationVar(&b.Timeout, "timeout", b.Timeout, "longest wait for a session to run or an app to answer")
	f.StringVar(&cfg.CPUProfile, "cpu-profile", "", "write a CPU profile of the measurements (the process: proxy, agent, API and clients) to this file")
	return cmd
}

func runBenchApps(ctx context.Context, cfg benchAppsConfig) (err error) {
	cfg.Bench.Progress = func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }
	dir, err := os.MkdirTemp("", "cairn-bench-apps-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			slog.Warn("remove the benchmark's data directory", "dir", dir, "error", rerr)
		}
	}()
	jupyterSkip := ""
	var extra []string
	if cfg.Bench.Jupyter {
		if ok, why := appbench.ImagePresent(ctx, cfg.Podman, cfg.Bench.JupyterImage); ok {
			extra = append(extra, cfg.Bench.JupyterImage)
		} else {
			jupyterSkip = why
			slog.Warn("Jupyter not measured", "reason", why)
		}
	}
	srv, err := appbench.StartServer(ctx, appbench.ServerConfig{DataDir: dir + "/data", Podman: cfg.Podman, Images: extra})
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop the server: %w", serr))
		}
	}()
	slog.Info("apps benchmark: serving", "api", srv.API, "app_proxy", srv.ProxyURL, "agent_id", srv.AgentID)
	start := time.Now()
	app, err := appbench.Deploy(ctx, srv, dir, cfg.Bench.Timeout)
	if err != nil {
		return fmt.Errorf("the echo app: %w", err)
	}
	slog.Info("apps benchmark: echo app up", "session", app.SessionID, "proxy", app.ProxyBase, "direct", app.DirectBase,
		"after", time.Since(start).Round(time.Millisecond))
	stopProfile := func() {}
	if cfg.CPUProfile != "" {
		stopProfile = cpuProfile(cfg.CPUProfile)
	}
	res, err := appbench.Run(ctx, srv, app, cfg.Bench, jupyterSkip)
	stopProfile()
	if err != nil {
		return err
	}
	fmt.Printf("\napp proxy (load average %s before, %s after)\n", res.LoadBefore, res.LoadAfter)
	if err := appbench.WriteTable(os.Stdout, res); err != nil {
		return err
	}
	if res.Jupyter.Failed != "" {
		// A failed measurement (a 404 or 502 counted as a request would
		// be worse) is not written into the benchmarks' record.
		return fmt.Errorf("jupyter: %s", res.Jupyter.Failed)
	}
	if cfg.Append == "" {
		return nil
	}
	var md bytes.Buffer
	if err := appbench.WriteMarkdown(&md, res); err != nil {
		return err
	}
	return appendFile(cfg.Append, md.Bytes())
}
