package appbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/cairnhq/cairn/infra/apptest"
)

// Way is how a request reaches the app.
type Way int

const (
	// Proxy is browser -> app proxy -> agent -> container.
	Proxy Way = iota
	// Direct is the published host port on the agent's loopback.
	Direct
)

func (w Way) String() string {
	if w == Proxy {
		return "proxy"
	}
	return "direct"
}

// order is the ways in of measured round r: they take turns going first.
func order(r int) []Way {
	if r%2 == 0 {
		return []Way{Proxy, Direct}
	}
	return []Way{Direct, Proxy}
}

// clients are the keep-alive HTTP clients of one way in.
type clients struct {
	base   string
	cookie *http.Cookie
	client *http.Client
}

func newClients(app *App, way Way, n int) *clients {
	t := &http.Transport{Proxy: nil, MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n,
		IdleConnTimeout: time.Minute, DisableCompression: true}
	c := &clients{base: app.DirectBase, client: &http.Client{Transport: t, Timeout: time.Minute}}
	if way == Proxy {
		c.base, c.cookie = app.ProxyBase, app.Cookie
	}
	return c
}

// do GETs path once, reads the whole answer and checks its length.
func (c *clients) do(ctx context.Context, path string, want int64) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return err
	}
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	switch {
	case err != nil:
		return err
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: %d", c.base+path, res.StatusCode)
	case n != want:
		return fmt.Errorf("GET %s: %d bytes, want %d", c.base+path, n, want)
	}
	return nil
}

// httpRound runs n clients GETting path for d; it returns every request's
// latency and the round's length.
func (c *clients) round(ctx context.Context, n int, d time.Duration, path string, want int64) ([]time.Duration, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := c.do(ctx, path, want); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					cancel()
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, time.Since(start), errors.Join(errs...)
}

// Series is what was measured of one scenario over its rounds.
type Series struct {
	Way      Way
	Requests int
	Elapsed  time.Duration
	P50, P99 time.Duration
	latency  []time.Duration
}

// PerSecond is the series' requests per second.
func (s Series) PerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Requests) / s.Elapsed.Seconds()
}

func (s *Series) add(lat []time.Duration, elapsed time.Duration) {
	s.latency = append(s.latency, lat...)
	s.Requests += len(lat)
	s.Elapsed += elapsed
}

func (s *Series) finish() {
	slices.Sort(s.latency)
	s.P50, s.P99 = percentile(s.latency, 50), percentile(s.latency, 99)
}

// percentile is the nearest-rank percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// HTTPResult is one answer size through both ways in.
type HTTPResult struct {
	// App names the app when it is not the echo app (JupyterLabel).
	App           string
	Path          string
	Size          int64
	Proxy, Direct Series
}

// Ratio is the proxy's requests/s over the direct ones.
func (r HTTPResult) Ratio() float64 {
	if r.Direct.PerSecond() == 0 {
		return 0
	}
	return r.Proxy.PerSecond() / r.Direct.PerSecond()
}

// measureHTTP runs cfg's rounds on path, alternating the ways in.
func measureHTTP(ctx context.Context, app *App, cfg Config, path string, size int64) (HTTPResult, error) {
	res := HTTPResult{Path: path, Size: size, Proxy: Series{Way: Proxy}, Direct: Series{Way: Direct}}
	ways := map[Way]*clients{Proxy: newClients(app, Proxy, cfg.Clients), Direct: newClients(app, Direct, cfg.Clients)}
	series := map[Way]*Series{Proxy: &res.Proxy, Direct: &res.Direct}
	if cfg.Warmup > 0 {
		for _, w := range order(0) {
			cfg.progress("HTTP %s %s: warm-up %s", path, w, cfg.Warmup)
			if _, _, err := ways[w].round(ctx, cfg.Clients, cfg.Warmup, path, size); err != nil {
				return res, fmt.Errorf("warm-up %s: %w", w, err)
			}
		}
	}
	for r := range cfg.Rounds {
		for _, w := range order(r) {
			lat, elapsed, err := ways[w].round(ctx, cfg.Clients, cfg.Duration, path, size)
			if err != nil {
				return res, fmt.Errorf("round %d %s: %w", r+1, w, err)
			}
			series[w].add(lat, elapsed)
			cfg.progress("HTTP %s %s round %d: %.0f req/s", path, w, r+1, float64(len(lat))/elapsed.Seconds())
		}
	}
	res.Proxy.finish()
	res.Direct.finish()
	return res, nil
}

// WebSocketResult is the echo's round trip through both ways in.
type WebSocketResult struct {
	Proxy, Direct Series
}

// AddedP99 is what the proxy adds to the round trip's p99.
func (r WebSocketResult) AddedP99() time.Duration { return r.Proxy.P99 - r.Direct.P99 }

// measureWebSocket sends cfg.Messages messages per round on one socket
// per way in, each waiting for its echo.
func measureWebSocket(ctx context.Context, app *App, cfg Config) (WebSocketResult, error) {
	res := WebSocketResult{Proxy: Series{Way: Proxy}, Direct: Series{Way: Direct}}
	series := map[Way]*Series{Proxy: &res.Proxy, Direct: &res.Direct}
	conns := map[Way]*websocket.Conn{}
	for _, w := range []Way{Proxy, Direct} {
		u := "ws" + app.DirectBase[len("http"):] + apptest.WebSocketPath
		opts := &websocket.DialOptions{}
		if w == Proxy {
			u = "ws" + app.ProxyBase[len("http"):] + apptest.WebSocketPath
			opts.HTTPHeader = http.Header{"Cookie": {app.Cookie.Name + "=" + app.Cookie.Value}}
		}
		dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		c, _, err := websocket.Dial(dctx, u, opts)
		cancel()
		if err != nil {
			return res, fmt.Errorf("WebSocket %s: %w", w, err)
		}
		defer c.Close(websocket.StatusNormalClosure, "")
		conns[w] = c
	}
	msg := []byte("ping from cairn-bench apps")
	for r := range cfg.Rounds + 1 { // the first round warms up
		for _, w := range order(r) {
			lat := make([]time.Duration, 0, cfg.Messages)
			start := time.Now()
			for range cfg.Messages {
				t0 := time.Now()
				if err := roundTrip(ctx, conns[w], msg, cfg.Timeout); err != nil {
					return res, fmt.Errorf("WebSocket %s: %w", w, err)
				}
				lat = append(lat, time.Since(t0))
			}
			if r > 0 {
				series[w].add(lat, time.Since(start))
			}
		}
	}
	res.Proxy.finish()
	res.Direct.finish()
	cfg.progress("WebSocket round trip p99: proxy %s, direct %s", res.Proxy.P99, res.Direct.P99)
	return res, nil
}

func roundTrip(ctx context.Context, c *websocket.Conn, msg []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
		return err
	}
	_, got, err := c.Read(ctx)
	if err != nil {
		return err
	}
	if string(got) != string(msg) {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}
