package appbench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// LoadAverage is the machine's load average (1, 5, 15 min), or "".
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// row is one line of the report.
type row struct {
	scenario, way, n, perSecond, p50, p99, ratio, target string
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", msf(d)) }

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func check(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d B", n)
}

func (r Result) rows() []row {
	var out []row
	for _, h := range r.HTTP {
		out = append(out, r.httpRows(h)...)
	}
	out = append(out, r.jupyterHTTPRows()...)
	ws := r.WebSocket
	for _, s := range []Series{ws.Proxy, ws.Direct} {
		x := row{scenario: "WebSocket echo round trip, 1 client", way: s.Way.String(), n: fmt.Sprint(s.Requests),
			perSecond: fmt.Sprintf("%.0f", s.PerSecond()), p50: ms(s.P50), p99: ms(s.P99)}
		if s.Way == Proxy {
			x.ratio = fmt.Sprintf("%+.2f ms p50, %+.2f ms p99", msf(ws.Proxy.P50-ws.Direct.P50), msf(ws.AddedP99()))
			x.target = fmt.Sprintf("added p99 ≤ %s %s", ms(TargetAddedP99), check(ws.AddedP99() <= TargetAddedP99))
		}
		out = append(out, x)
	}
	j := row{scenario: "POST /v1/sessions (" + r.Jupyter.Image + ") → first 200 of Jupyter's /api/status", way: "proxy", n: "1"}
	switch {
	case r.Jupyter.Skipped != "":
		j.n, j.target = "0", "skipped: "+r.Jupyter.Skipped
	case r.Jupyter.Elapsed > 0: // reached, even if its HTTP measurement then failed
		j.p50 = fmt.Sprintf("%.1f s", r.Jupyter.Elapsed.Seconds())
	default:
		j.n, j.target = "0", "FAILED: "+oneLine(r.Jupyter.Failed, 240)
	}
	return append(out, j)
}

// httpRows are the proxy and direct rows of one HTTP scenario.
func (r Result) httpRows(h HTTPResult) []row {
	what := size(h.Size)
	if h.App != "" {
		what = h.App + ", " + what
	}
	name := fmt.Sprintf("HTTP GET %s (%s), %d clients", h.Path, what, r.Config.Clients)
	var out []row
	for _, s := range []Series{h.Proxy, h.Direct} {
		x := row{scenario: name, way: s.Way.String(), n: fmt.Sprint(s.Requests), perSecond: fmt.Sprintf("%.0f", s.PerSecond()),
			p50: ms(s.P50), p99: ms(s.P99)}
		if s.Way == Proxy {
			x.ratio = fmt.Sprintf("%.2fx", h.Ratio())
			x.target = fmt.Sprintf("≥ %.1fx %s", TargetRatio, check(h.Ratio() >= TargetRatio))
		}
		out = append(out, x)
	}
	return out
}

// jupyterHTTPRows are the Jupyter static file's rows, or one row saying
// why it was not measured.
func (r Result) jupyterHTTPRows() []row {
	if h := r.Jupyter.HTTP; h != nil {
		return r.httpRows(*h)
	}
	x := row{scenario: fmt.Sprintf("HTTP GET %s (%s), %d clients", JupyterStaticPath, JupyterLabel, r.Config.Clients),
		way: "proxy", n: "0"}
	switch {
	case r.Jupyter.Skipped != "":
		x.target = "skipped: " + r.Jupyter.Skipped
	case r.Jupyter.Elapsed > 0:
		x.target = "FAILED: " + oneLine(r.Jupyter.Failed, 240)
	default:
		x.target = "not measured: Jupyter was not reached"
	}
	return []row{x}
}

// WriteTable writes the result as a table for a terminal.
func WriteTable(w io.Writer, r Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tway\tn\treq/s\tp50\tp99\tproxy vs direct\ttarget")
	for _, x := range r.rows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.scenario, x.way, x.n, x.perSecond, x.p50, x.p99, x.ratio, x.target)
	}
	return tw.Flush()
}

// WriteMarkdown writes the result as a section of docs/benchmarks.md.
func WriteMarkdown(w io.Writer, r Result) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "\n## App proxy: HTTP, WebSocket and Jupyter through the proxy vs straight to the published port\n\n")
	fmt.Fprintf(&b, "Made by `cairn-bench apps` on %s, %s, %d CPUs, %s; load average %s before, %s after (1, 5, 15 min).\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "A `cairn dev` in the benchmark's process (SQLite, embedded NATS, the local agent on Podman, its signed endpoint and the\n"+
		"app proxy on loopback) runs a static Go echo app (infra/apptest) in a session of the busybox base image on a pre-opened port.\n"+
		"*proxy* is client → app proxy (app cookie checked, route from the sessions read model, kept until its next write) → a kept-alive\n"+
		"tunnel through the agent's endpoint (one signed upgrade per connection) → the published host port → container; *direct* is\n"+
		"the published host port on the agent's loopback (`service_ports.host_port`).\n"+
		"HTTP: %d keep-alive clients in the same process (the load generator shares the %d cores) in %d measured rounds of %s per way,\n"+
		"alternating which goes first, after %s of warm-up each; p50/p99 over every request. WebSocket: one socket per way, a 26-byte\n"+
		"message and its echo, %d round trips per round, %d rounds after one of warm-up. Jupyter: from `POST /v1/sessions` to the first 200\n"+
		"of `/api/status` through the proxy (Jupyter's token handled by Cairn); then, in the same way as the echo app's HTTP, one of\n"+
		"the notebook's static files (`%s`, served without its token) under its base path, through the proxy and\n"+
		"straight to the `jupyter` port's host port: the echo app costs almost nothing per request (the proxy's worst case), Jupyter\n"+
		"is a real app. Targets (issue #15): proxy ≥ %.1fx direct req/s; WebSocket added p99 ≤ %s. The machine is shared: read the ratios.\n\n",
		c.Clients, runtime.NumCPU(), c.Rounds, c.Duration, c.Warmup, c.Messages, c.Rounds, JupyterStaticPath, TargetRatio, ms(TargetAddedP99))
	fmt.Fprintf(&b, "| scenario | way | n | req/s | p50 | p99 | proxy vs direct | target |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, x := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.scenario, x.way, x.n, x.perSecond, x.p50, x.p99, x.ratio, x.target)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine makes s fit a table cell: one line, no pipes, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.NewReplacer("\n", " ", "|", "/").Replace(s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
