package webuibench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/infra/browsertest"
)

// Script is the browser part, relative to web/ui.
const Script = "bench/webui.bench.mjs"

// pagePaths are the pages the script measures, in its order.
var pagePaths = []string{"/sessions", "/data"}

// browserOutput is the JSON the script prints on its last line.
type browserOutput struct {
	Pages map[string][]struct {
		DOM      float64  `json:"dom"`
		Painted  float64  `json:"painted"`
		HTML     float64  `json:"html"`
		Script   float64  `json:"script"`
		API      float64  `json:"api"`
		Requests []string `json:"requests"`
		Queries  float64  `json:"queries"`
	} `json:"pages"`
	SSE struct {
		Page []float64 `json:"page"`
		Bare []float64 `json:"bare"`
	} `json:"sse"`
}

// runBrowser runs the script as user against srv; its stderr (progress)
// goes to ours.
func runBrowser(ctx context.Context, cfg Config, srv *Server, user User, label string) (browserOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Tools.Node, Script)
	cmd.Dir = cfg.Tools.UIDir
	cmd.Env = append(os.Environ(),
		browsertest.EnvChromium+"="+cfg.Tools.Chromium,
		"CAIRN_URL="+srv.URL, "CAIRN_EMAIL="+user.Email, "CAIRN_PASSWORD="+user.Password, "CAIRN_TOKEN="+user.Token,
		"BENCH_LOADS="+strconv.Itoa(cfg.Loads), "BENCH_WARMUP="+strconv.Itoa(cfg.Warmup),
		"BENCH_CHANGES="+strconv.Itoa(cfg.Changes), "BENCH_IMAGE="+cfg.Image, "BENCH_LABEL="+label)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return browserOutput{}, fmt.Errorf("node %s: %w", Script, err)
	}
	last := lastLine(&stdout)
	var out browserOutput
	if err := decodeJSON([]byte(last), &out); err != nil {
		return out, fmt.Errorf("node %s printed %q: %w", Script, last, err)
	}
	for _, p := range pagePaths {
		if len(out.Pages[p]) != cfg.Loads {
			return out, fmt.Errorf("node %s: %d loads of %s, want %d", Script, len(out.Pages[p]), p, cfg.Loads)
		}
	}
	if len(out.SSE.Page) != cfg.Changes || len(out.SSE.Bare) != cfg.Changes {
		return out, fmt.Errorf("node %s: %d and %d SSE samples, want %d each", Script, len(out.SSE.Page), len(out.SSE.Bare), cfg.Changes)
	}
	return out, nil
}

// lastLine is the last non-empty line of r.
func lastLine(r io.Reader) string {
	var last string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			last = t
		}
	}
	return last
}
