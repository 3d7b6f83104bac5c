package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/appbench"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestBenchAppsTiny runs `cairn-bench apps` at a tiny size on the real
// Podman, so the benchmark cannot rot: the echo app answers through the
// proxy and directly, both ways are measured, and a Jupyter of the python
// image is reached through the proxy and its static file measured both
// ways.
func TestBenchAppsTiny(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	python := podmantest.Python(t, uri)
	out := filepath.Join(t.TempDir(), "benchmarks.md")
	cfg := benchAppsConfig{Podman: uri, Append: out, Bench: appbench.Config{
		Clients: 2, Duration: 200 * time.Millisecond, Rounds: 1, Warmup: 50 * time.Millisecond, Messages: 20,
		Jupyter: true, JupyterImage: python, Timeout: 3 * time.Minute,
	}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := runBenchApps(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{"## App proxy", "/small (3 B)", "/big (1 MiB)", "| proxy |", "| direct |",
		"WebSocket echo round trip", "first 200 of Jupyter's /api/status | proxy | 1 |",
		"| HTTP GET " + appbench.JupyterStaticPath + " (Jupyter static file, "} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| HTTP") && strings.Contains(line, "| 0 |") {
			t.Errorf("a scenario measured nothing: %s", line)
		}
	}
}

func TestBenchAppsConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (benchAppsConfig{Podman: "unix:///x", Bench: appbench.DefaultConfig()}).Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	err := benchAppsConfig{Bench: appbench.Config{Jupyter: true}}.Validate()
	for _, want := range []string{"--podman", "--clients", "--duration", "--rounds", "--messages", "--jupyter-image", "--timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}

// TestBenchAppsImageAbsent: an image Podman does not have is told as
// such, the reason the Jupyter row prints.
func TestBenchAppsImageAbsent(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	present, why := appbench.ImagePresent(context.Background(), uri, "localhost/cairn/no-such-image:latest")
	if present || !strings.Contains(why, "localhost/cairn/no-such-image:latest is absent") {
		t.Errorf("ImagePresent = %v, %q; want absent, saying so", present, why)
	}
	if present, why := appbench.ImagePresent(context.Background(), uri, podmantest.Image(t, uri)); !present {
		t.Errorf("the base image: absent (%s)", why)
	}
}

// TestBenchAppsJupyterRows: the Jupyter static file's rows read like the
// echo app's (proxy and direct, the ratio against the target), and when
// it was not measured one row says why.
func TestBenchAppsJupyterRows(t *testing.T) {
	t.Parallel()
	cfg := appbench.DefaultConfig()
	series := func(way appbench.Way, n int) appbench.Series {
		return appbench.Series{Way: way, Requests: n, Elapsed: time.Second, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond}
	}
	name := "| HTTP GET " + appbench.JupyterStaticPath + " (Jupyter static file, 1150 B), 16 clients "
	for _, c := range []struct {
		what    string
		jupyter appbench.JupyterResult
		want    []string
	}{
		{"measured", appbench.JupyterResult{Image: "py", Elapsed: 3 * time.Second, HTTP: &appbench.HTTPResult{
			App: appbench.JupyterLabel, Path: appbench.JupyterStaticPath, Size: 1150,
			Proxy: series(appbench.Proxy, 800), Direct: series(appbench.Direct, 1000)}},
			[]string{name + "| proxy | 800 | 800 | 2.00 ms | 9.00 ms | 0.80x | ≥ 0.7x ✓ |",
				name + "| direct | 1000 | 1000 | 2.00 ms | 9.00 ms |  |  |", "/api/status | proxy | 1 |  | 3.0 s |"}},
		{"below the target", appbench.JupyterResult{Image: "py", Elapsed: 3 * time.Second, HTTP: &appbench.HTTPResult{
			App: appbench.JupyterLabel, Path: appbench.JupyterStaticPath, Size: 1150,
			Proxy: series(appbench.Proxy, 500), Direct: series(appbench.Direct, 1000)}},
			[]string{name + "| proxy | 500 | 500 | 2.00 ms | 9.00 ms | 0.50x | ≥ 0.7x ✗ |"}},
		{"skipped", appbench.JupyterResult{Image: "py", Skipped: "image py is absent"},
			[]string{"(Jupyter static file), 16 clients | proxy | 0 |  |  |  |  | skipped: image py is absent |"}},
		{"failed after start", appbench.JupyterResult{Image: "py", Elapsed: 3 * time.Second, Failed: "GET x: 404"},
			[]string{"(Jupyter static file), 16 clients | proxy | 0 |  |  |  |  | FAILED: GET x: 404 |", "/api/status | proxy | 1 |  | 3.0 s |"}},
		{"not reached", appbench.JupyterResult{Image: "py", Failed: "jupyter: no 200"},
			[]string{"(Jupyter static file), 16 clients | proxy | 0 |  |  |  |  | not measured: Jupyter was not reached |",
				"/api/status | proxy | 0 |  |  |  |  | FAILED: jupyter: no 200 |"}},
	} {
		var md bytes.Buffer
		if err := appbench.WriteMarkdown(&md, appbench.Result{Config: cfg, Jupyter: c.jupyter}); err != nil {
			t.Fatal(err)
		}
		for _, want := range c.want {
			if !strings.Contains(md.String(), want) {
				t.Errorf("%s: the section lacks %q:\n%s", c.what, want, md.String())
			}
		}
	}
}
