// Package browsertest runs the Web-UI's browser tests (web/ui/test, Node's
// test runner driving Debian's Chromium through playwright-core) from Go
// tests, and reports what is missing to run them: with CI=true a missing
// browser, Node or npm packages fail the test, otherwise it is skipped
// loudly (and listed by `make test`). scripts/install-browser.sh installs
// all of them. Find does the same outside a test, for the Web-UI's
// benchmark (cairn-bench webui).
package browsertest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvChromium names the browser binary (default /usr/bin/chromium).
const EnvChromium = "CAIRN_CHROMIUM"

// Tools are what the browser tests need.
type Tools struct {
	Node     string // the node binary
	Chromium string // the browser
	UIDir    string // web/ui, with its node_modules installed
}

// UIDir is web/ui of this module.
func UIDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "web", "ui")
}

// Require finds the tools, or ends the test: t.Fatal with CI=true, a loud
// t.Skip otherwise. browser says whether the test needs Chromium (a build
// check needs only Node and the packages).
func Require(t testing.TB, browser bool) Tools {
	t.Helper()
	tools, missing := Find(browser)
	if len(missing) > 0 {
		unavailable(t, strings.Join(missing, "; "))
	}
	return tools
}

// Find finds the tools outside a test (a benchmark runs them too) and
// lists what is missing (nothing when all are there). browser says
// whether Chromium is needed.
func Find(browser bool) (tools Tools, missing []string) {
	tools = Tools{UIDir: UIDir()}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node is not on PATH")
	}
	tools.Node = node
	if _, err := os.Stat(filepath.Join(tools.UIDir, "node_modules", "esbuild")); err != nil {
		missing = append(missing, "web/ui/node_modules is not installed (npm ci)")
	}
	if browser {
		tools.Chromium = os.Getenv(EnvChromium)
		if tools.Chromium == "" {
			tools.Chromium = "/usr/bin/chromium"
		}
		if _, err := os.Stat(tools.Chromium); err != nil {
			missing = append(missing, "no browser at "+tools.Chromium)
		}
	}
	return tools, missing
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("Browser suite %s NOT RUN: %s (run scripts/install-browser.sh, as root to install Chromium)", t.Name(), why)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	if path := os.Getenv("CAIRN_TEST_SKIP_REPORT"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, msg)
			f.Close()
		}
	}
	t.Skip(msg)
}

// Run runs node with args in web/ui, its output in the test's log, with
// env added to the environment (and CAIRN_CHROMIUM set), and fails the
// test if it fails.
func (tools Tools) Run(t testing.TB, timeout time.Duration, env map[string]string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.Node, args...)
	cmd.Dir = tools.UIDir
	cmd.Env = append(os.Environ(), EnvChromium+"="+tools.Chromium)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		logLines(t, out)
	}()
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
}

func logLines(t testing.TB, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		t.Log(sc.Text())
	}
}
