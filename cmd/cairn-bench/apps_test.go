package main

import (
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
// image is reached through the proxy.
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
		"WebSocket echo round trip", "first 200 of Jupyter's /api/status | proxy | 1 |"} {
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
