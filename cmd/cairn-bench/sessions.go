package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cairnhq/cairn/infra/httpapi"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/images"
)

// benchSessionsCommand is the sessions' command: it prints a line and
// exits at once on SIGTERM (a shell as PID 1 ignores SIGTERM without a
// trap), so that terminating a sample never waits for the stop grace.
const benchSessionsCommand = `sh -c 'trap "exit 0" TERM; echo hello; sleep 30 & wait'`

type benchSessionsConfig struct {
	API       string
	Token     string
	Sessions  int
	Podman    string
	Image     string
	Append    string
	PollEvery time.Duration
	Timeout   time.Duration
}

func (c benchSessionsConfig) Validate() error {
	var errs []error
	if c.Sessions < 1 {
		errs = append(errs, fmt.Errorf("--sessions %d: must be at least 1", c.Sessions))
	}
	if c.API != "" && c.Token == "" {
		errs = append(errs, errors.New("--api needs --token (or CAIRN_TOKEN)"))
	}
	if c.PollEvery <= 0 || c.Timeout <= 0 {
		errs = append(errs, errors.New("--poll-every and --timeout must be positive"))
	}
	if err := images.Validate(c.Image); err != nil {
		errs = append(errs, fmt.Errorf("--image: %w", err))
	}
	return errors.Join(errs...)
}

func newBenchSessionsCommand() *cobra.Command {
	cfg := benchSessionsConfig{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Benchmark session start latency (POST → RUNNING visible) against bare podman run",
		Long: `sessions measures how long a session takes from POST /v1/sessions until GET
/v1/sessions/{id} shows it RUNNING, over --sessions sessions one after the
other, next to two baselines measured in the same run, alternating with
the sessions: "podman run --rm <image> true" (create, start, exit, remove)
and "podman run -d <image> <the sessions' command>" (create and start, as a
session's RUNNING means). Each session is terminated before the next one.

Without --api it starts its own "cairn dev" in a temporary directory (SQLite,
embedded NATS, a local agent on --podman), and removes it afterwards.
The podman baselines run the podman CLI on this machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			return runBenchSessions(cmd.Context(), cfg)
		},
	}
	cmd.AddCommand(newBenchSessionsQueueCommand())
	f := cmd.Flags()
	f.StringVar(&cfg.API, "api", "", "Cairn API to measure, http://host:port (default: start a cairn dev of its own)")
	f.StringVar(&cfg.Token, "token", "", "bearer token for --api")
	f.IntVar(&cfg.Sessions, "sessions", 20, "sessions (and baseline runs) to measure")
	f.StringVar(&cfg.Podman, "podman", devserver.DefaultPodman, "Podman service of the local agent (without --api)")
	f.StringVar(&cfg.Image, "image", images.BaseImage, "image of the sessions and the baselines")
	f.StringVar(&cfg.Append, "append", "", "append the table as Markdown to this file (e.g. docs/benchmarks.md)")
	f.DurationVar(&cfg.PollEvery, "poll-every", 5*time.Millisecond, "how often a session's status is read while it starts")
	f.DurationVar(&cfg.Timeout, "timeout", time.Minute, "longest wait for one session to run or end")
	return cmd
}

// target is the API the benchmark talks to.
type target struct {
	api, token string
	client     *http.Client
}

func runBenchSessions(ctx context.Context, cfg benchSessionsConfig) error {
	t := target{api: strings.TrimRight(cfg.API, "/"), token: cfg.Token, client: &http.Client{Timeout: 2 * time.Minute}}
	if t.api == "" {
		stop, err := startBenchServer(ctx, cfg, &t)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := t.awaitAgent(ctx, cfg.Timeout); err != nil {
		return err
	}

	slog.Info("warming up: one session and one run of each baseline, not measured")
	if _, err := t.startSession(ctx, cfg); err != nil {
		return fmt.Errorf("warm-up session: %w", err)
	}
	for _, b := range podmanBaselines(cfg.Image) {
		if _, err := b.run(ctx); err != nil {
			return fmt.Errorf("warm-up %s: %w", b.name, err)
		}
	}

	results := []*benchSeries{{name: "Cairn: POST /v1/sessions → RUNNING visible in GET"}}
	baselines := podmanBaselines(cfg.Image)
	for _, b := range baselines {
		results = append(results, &benchSeries{name: b.name})
	}
	for i := range cfg.Sessions {
		d, err := t.startSession(ctx, cfg)
		if err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		results[0].samples = append(results[0].samples, d)
		for j, b := range baselines {
			d, err := b.run(ctx)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", b.name, i+1, err)
			}
			results[j+1].samples = append(results[j+1].samples, d)
		}
		slog.Info("sample", "n", i+1, "cairn", results[0].samples[i].Round(time.Millisecond))
	}

	fmt.Println()
	writeSessionsTable(os.Stdout, results)
	if cfg.Append == "" {
		return nil
	}
	return appendSessionsMarkdown(cfg, results)
}

// startBenchServer runs a cairn dev in a temporary directory and points t
// at it; stop ends it and removes what it left.
func startBenchServer(ctx context.Context, cfg benchSessionsConfig, t *target) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "cairn-bench-sessions-")
	if err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	agentID := "bench-" + hex.EncodeToString(b[:])
	ready := make(chan devserver.Endpoints, 1)
	srvCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- devserver.Run(srvCtx, devserver.Config{
			Listen: "127.0.0.1:0", NATSListen: "127.0.0.1:0", DataDir: dir,
			AgentID: agentID, Podman: cfg.Podman, Images: []string{cfg.Image}, Version: version,
			// Its logs would drown the table: warnings and errors only.
			Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			OnReady: func(e devserver.Endpoints) { ready <- e },
		})
	}()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			slog.Warn("benchmark server", "error", err)
		}
		removeAgentContainers(cfg.Podman, agentID)
		if err := os.RemoveAll(dir); err != nil {
			slog.Warn("remove the benchmark's data directory", "dir", dir, "error", err)
		}
	}
	select {
	case e := <-ready:
		t.api, t.token = e.APIURL, e.Token
		slog.Info("benchmark server up", "api", e.APIURL, "agent_id", agentID, "data_dir", dir)
		return stop, nil
	case err := <-done:
		done <- err
		stop()
		return nil, fmt.Errorf("cairn dev: %w", err)
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

// removeAgentContainers removes what the benchmark's agent left on the
// Podman service at uri (its containers outlive it by design).
func removeAgentContainers(uri, agentID string) {
	out, err := exec.Command("podman", "--url", uri, "ps", "-a", "-q", "--filter", "label=cairn.agent="+agentID).Output()
	if err != nil {
		slog.Warn("list the benchmark's containers", "error", err)
		return
	}
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		if err := exec.Command("podman", append([]string{"--url", uri, "rm", "-f", "-t", "0"}, ids...)...).Run(); err != nil {
			slog.Warn("remove the benchmark's containers", "error", err)
		}
	}
}

// call sends a request and decodes a JSON answer into out.
func (t target) call(ctx context.Context, method, path string, body any, want int, out any) error {
	return httpapi.CallJSON(ctx, t.client, method, t.api+path, t.token, body, want, out)
}

// awaitAgent waits until an agent is alive.
func (t target) awaitAgent(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var list struct {
			Items []struct {
				Status string `json:"status"`
			} `json:"items"`
		}
		if err := t.call(ctx, "GET", "/v1/agents", nil, http.StatusOK, &list); err != nil {
			return err
		}
		if slices.ContainsFunc(list.Items, func(a struct {
			Status string `json:"status"`
		}) bool {
			return a.Status == "alive"
		}) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no agent alive after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type benchSession struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	Position     uint64 `json:"position"`
}

// startSession measures one session from POST to RUNNING visible, then
// terminates it and waits until it has ended (not measured).
func (t target) startSession(ctx context.Context, cfg benchSessionsConfig) (time.Duration, error) {
	body := map[string]any{
		"image": cfg.Image, "command": benchSessionsCommand,
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	}
	start := time.Now()
	var created benchSession
	if err := t.call(ctx, "POST", "/v1/sessions", body, http.StatusCreated, &created); err != nil {
		return 0, err
	}
	path := fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", created.ID, created.Position)
	s, err := t.await(ctx, path, cfg, "RUNNING")
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	var res benchSession
	if err := t.call(ctx, "DELETE", "/v1/sessions/"+created.ID, nil, http.StatusAccepted, &res); err != nil {
		return 0, err
	}
	if _, err := t.await(ctx, fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", created.ID, res.Position), cfg, "TERMINATED"); err != nil {
		return 0, fmt.Errorf("terminating %s (%s): %w", s.ID, s.Status, err)
	}
	return elapsed, nil
}

// await polls a session every cfg.PollEvery until it has status want.
func (t target) await(ctx context.Context, path string, cfg benchSessionsConfig, want string) (benchSession, error) {
	deadline := time.Now().Add(cfg.Timeout)
	for {
		var s benchSession
		if err := t.call(ctx, "GET", path, nil, http.StatusOK, &s); err != nil {
			return s, err
		}
		switch s.Status {
		case want:
			return s, nil
		case "TERMINATED", "CANCELLED", "ERROR":
			return s, fmt.Errorf("session %s ended %s (%s) while waiting for %s", s.ID, s.Status, s.StatusReason, want)
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("session %s is %s after %s, not %s", s.ID, s.Status, cfg.Timeout, want)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(cfg.PollEvery):
		}
	}
}

// podmanBaseline is one way of running the image with the podman CLI.
type podmanBaseline struct {
	name string
	run  func(ctx context.Context) (time.Duration, error)
}

func podmanBaselines(image string) []podmanBaseline {
	return []podmanBaseline{
		{
			name: "podman run --rm " + image + " true",
			run: func(ctx context.Context) (time.Duration, error) {
				start := time.Now()
				err := podmanCLI(ctx, "run", "--rm", image, "true")
				return time.Since(start), err
			},
		},
		{
			name: "podman run -d " + image + " + the sessions' command, until started",
			run: func(ctx context.Context) (time.Duration, error) {
				var b [6]byte
				_, _ = rand.Read(b[:])
				name := "cairn-bench-" + hex.EncodeToString(b[:])
				start := time.Now()
				err := podmanCLI(ctx, "run", "-d", "--name", name, "--memory", "64m", image, "sh", "-c",
					`trap "exit 0" TERM; echo hello; sleep 30 & wait`)
				elapsed := time.Since(start)
				if rmErr := podmanCLI(context.WithoutCancel(ctx), "rm", "-f", "-t", "0", name); err == nil {
					err = rmErr
				}
				return elapsed, err
			},
		},
	}
}

func podmanCLI(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "podman", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// benchSeries is one measured scenario.
type benchSeries struct {
	name    string
	samples []time.Duration
}

// percentile is the nearest-rank percentile: with 20 samples p50 is the
// 10th smallest and p99 the largest.
func (s *benchSeries) percentile(p float64) time.Duration {
	sorted := slices.Clone(s.samples)
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func (s *benchSeries) mean() time.Duration {
	var sum time.Duration
	for _, d := range s.samples {
		sum += d
	}
	return sum / time.Duration(max(len(s.samples), 1))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// ratio is a's p50 over b's.
func ratio(a, b *benchSeries) string {
	if b.percentile(50) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a.percentile(50))/float64(b.percentile(50)))
}

func writeSessionsTable(w io.Writer, results []*benchSeries) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tn\tp50\tp99\tmean\tCairn p50 / this p50")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.name, len(r.samples), ms(r.percentile(50)), ms(r.percentile(99)), ms(r.mean()), ratio(results[0], r))
	}
	tw.Flush()
}

func appendSessionsMarkdown(cfg benchSessionsConfig, results []*benchSeries) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Session start latency\n\n")
	fmt.Fprintf(&b, "Made by `cairn-bench sessions` on %s, %s, %d CPUs, %s: %d sessions one after the other\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), cfg.Sessions)
	target := "its own `cairn dev` (SQLite, embedded NATS, the local agent on Podman)"
	if cfg.API != "" {
		target = "the API at " + cfg.API
	}
	fmt.Fprintf(&b, "on %s, each session measured from `POST /v1/sessions` until `GET` shows it RUNNING\n", target)
	fmt.Fprintf(&b, "(polled every %s), alternating with the two bare Podman baselines (podman CLI, same image, same machine).\n", cfg.PollEvery)
	fmt.Fprintf(&b, "p99 is the nearest-rank percentile (of 20 samples: their maximum). The machines are shared and noisy: read the ratios.\n\n")
	fmt.Fprintf(&b, "| scenario | n | p50 | p99 | mean | Cairn p50 / this p50 | target |\n|---|---:|---:|---:|---:|---:|---|\n")
	for i, r := range results {
		target := ""
		if i == 1 { // podman run --rm <image> true, the baseline
			target = "Cairn p50 ≤ 1.5x ✗"
			if float64(results[0].percentile(50)) <= 1.5*float64(r.percentile(50)) {
				target = "Cairn p50 ≤ 1.5x ✓"
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", r.name, len(r.samples), ms(r.percentile(50)), ms(r.percentile(99)), ms(r.mean()), ratio(results[0], r), target)
	}
	return appendFile(cfg.Append, []byte(b.String()))
}
