package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/cairnhq/cairn/infra/apptest"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// The soak's shape (issue #15): 200 WebSockets through the app proxy, a
// message on each every few seconds: four minutes of warm-up, then ten
// minutes in which the proxy's memory, sampled every 30 s, must stay flat.
// The warm-up is that long because the Go runtime gives the memory of the
// sockets' opening back to the system only minutes later (RSS fell by a
// fifth at about 2m45s in a run, then held within 1 MiB to the end): a
// sample before that would be a high first point, not the steady state.
const (
	soakSockets  = 200
	soakDuration = 14 * time.Minute
	soakWarmUp   = 4 * time.Minute
	soakSample   = 30 * time.Second
	soakEvery    = 5 * time.Second
	// soakHTTPEvery paces one client's GETs through the proxy beside the
	// sockets: app traffic of the other kind, and enough allocation that
	// the collector runs every few tens of seconds, so the samples show
	// the process's steady state rather than when it last collected.
	soakHTTPEvery = 50 * time.Millisecond
	// soakMemoryBand is how far the last memory sample may be from the
	// first.
	soakMemoryBand = 0.10
	// soakGoroutineSlack is how many goroutines more than before the
	// sockets opened the process may run once they closed (idle
	// keep-alive connections come and go); a leak of even a tenth of the
	// sockets would leave hundreds.
	soakGoroutineSlack = 25
)

// TestLongAppProxySoak holds soakSockets WebSockets open through `cairn dev`'s
// app proxy to an echo server in a session for soakDuration, each sending
// a message every soakEvery and checking its echo, while one client GETs
// a small answer through the proxy every soakHTTPEvery, and samples the
// process's memory: the last sample must be within soakMemoryBand of the
// first (taken after the warm-up), the proxy's open-sockets gauge must
// come back to 0 once the sockets close, and the goroutines back to about
// where they were. CAIRN_SOAK_DURATION shortens it for a quick look at
// the sockets, the gauge and the goroutines (its warm-up, a tenth of it,
// is too short for the memory band: the first sample then still holds
// the start's garbage); `make test` runs the full length, in parallel
// with the other tests.
//
// It runs cairn built without the race detector (plainCairn), whatever
// the other tests use: the detector's shadow memory, which it never
// gives back, is most of a race build's resident memory and grows with
// every new address the program touches, so its RSS says nothing about
// the proxy's. The other app proxy tests run under the detector.
func TestLongAppProxySoak(t *testing.T) {
	if os.Getenv("CAIRN_LONG_TESTS") != "1" && os.Getenv("CAIRN_SOAK_DURATION") == "" {
		t.Skip("CAIRN_LONG_TESTS is unset: this soak takes about 15 minutes (make test-long runs it)")
	}
	t.Parallel()
	duration, warmUp, sample := soakDuration, soakWarmUp, soakSample
	if v := os.Getenv("CAIRN_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("CAIRN_SOAK_DURATION=%q: want a positive duration", v)
		}
		duration, warmUp, sample = d, d/10, d/20
	}
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	proxyAddr := freeAddr(t)
	d := startDevBin(t, plainCairn(t), uri, "--app-proxy-listen", proxyAddr)

	id := startEchoApp(t, d)
	jar, _ := cookiejar.New(nil)
	// No Timeout: a WebSocket outlives any request timeout (the dials and
	// reads below have contexts of their own).
	browser := &http.Client{Jar: jar}
	appURL := "http://" + proxyAddr + "/v1/sessions/" + id + "/apps/port-8080"
	fetch(t, &http.Client{Jar: jar, Timeout: 30 * time.Second}, d.openApp(id, "port-8080").URL) // the ticket for the cookie
	await.Until(t, waitTimeout, "the echo app answering through the proxy", func() bool {
		status, body := fetch(t, &http.Client{Jar: jar, Timeout: 30 * time.Second}, appURL+apptest.SmallPath)
		return status == http.StatusOK && body == apptest.SmallBody
	})
	goroutinesBefore := d.metric("go_goroutines")
	t.Logf("before the sockets: %.0f goroutines", goroutinesBefore)

	// Open the sockets.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sockets := make([]*websocket.Conn, soakSockets)
	for i := range sockets {
		dctx, dcancel := context.WithTimeout(ctx, waitTimeout)
		c, _, err := websocket.Dial(dctx, "ws://"+proxyAddr+"/v1/sessions/"+id+"/apps/port-8080"+apptest.WebSocketPath,
			&websocket.DialOptions{HTTPClient: browser})
		dcancel()
		if err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		sockets[i] = c
	}
	if n := d.metric("cairn_app_proxy_websockets"); n != soakSockets {
		t.Fatalf("cairn_app_proxy_websockets = %v with %d sockets open", n, soakSockets)
	}

	// Each socket sends a message every soakEvery (the first after a
	// share of it, so they do not all send at once) and checks its echo.
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	sent := make([]int, soakSockets)
	for i, c := range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := time.Duration(i) * soakEvery / soakSockets
			timer := time.NewTimer(first)
			defer timer.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
				if time.Now().After(end) {
					return
				}
				if err := echoOnce(ctx, c, fmt.Sprintf("socket %d message %d", i, n)); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("socket %d, message %d: %v", i, n, err))
					mu.Unlock()
					return
				}
				sent[i]++
				timer.Reset(soakEvery)
			}
		}()
	}

	// One client GETs the small answer through the proxy meanwhile.
	requests := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Jar: jar, Timeout: waitTimeout}
		tick := time.NewTicker(soakHTTPEvery)
		defer tick.Stop()
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			res, err := client.Get(appURL + apptest.SmallPath)
			if err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("GET %s: %v", apptest.SmallPath, err))
				mu.Unlock()
				return
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK || string(body) != apptest.SmallBody {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("GET %s: %d %q %v", apptest.SmallPath, res.StatusCode, body, err))
				mu.Unlock()
				return
			}
			requests++
		}
	}()

	// Sample the process's memory every sample after the warm-up.
	type memSample struct {
		at              time.Duration
		rss, heap, gors float64
	}
	var samples []memSample
	start := time.Now()
	warm := time.NewTimer(warmUp)
	<-warm.C
	tick := time.NewTicker(sample)
	defer tick.Stop()
	for {
		m := d.metrics()
		// The heap goal (next_gc) is set at each collection from the
		// heap it found live: unlike the heap in use, it does not swing
		// with the garbage of the moment.
		s := memSample{at: time.Since(start).Round(time.Second), rss: m["process_resident_memory_bytes"],
			heap: m["go_memstats_next_gc_bytes"], gors: m["go_goroutines"]}
		samples = append(samples, s)
		t.Logf("%6s: RSS %.1f MiB, heap goal %.1f MiB, heap in use %.1f MiB, %.0f goroutines, %.0f proxy sockets", s.at,
			s.rss/(1<<20), s.heap/(1<<20), m["go_memstats_heap_inuse_bytes"]/(1<<20), s.gors, m["cairn_app_proxy_websockets"])
		if m["cairn_app_proxy_websockets"] != soakSockets {
			t.Errorf("at %s cairn_app_proxy_websockets = %v, want %d", s.at, m["cairn_app_proxy_websockets"], soakSockets)
		}
		if time.Until(end) < sample/2 {
			break
		}
		<-tick.C
	}
	wg.Wait()
	total := 0
	for _, n := range sent {
		total += n
	}
	t.Logf("%d messages echoed on %d sockets and %d GETs answered in %s", total, soakSockets, requests, time.Since(start).Round(time.Second))
	for _, f := range failures {
		t.Error(f)
	}
	if minSent := int(duration/soakEvery) / 2; total < soakSockets*minSent {
		t.Errorf("%d messages echoed, want at least %d per socket", total, minSent)
	}

	if len(samples) < 2 {
		t.Fatalf("%d memory samples, want at least 2", len(samples))
	}
	first, last := samples[0], samples[len(samples)-1]
	if drift := (last.rss - first.rss) / first.rss; math.Abs(drift) > soakMemoryBand {
		t.Errorf("RSS went from %.1f MiB at %s to %.1f MiB at %s (%+.1f%%), want within ±%.0f%%",
			first.rss/(1<<20), first.at, last.rss/(1<<20), last.at, 100*drift, 100*soakMemoryBand)
	}
	t.Logf("RSS %+.1f%%, heap goal %+.1f%% from %s to %s", 100*(last.rss-first.rss)/first.rss,
		100*(last.heap-first.heap)/first.heap, first.at, last.at)

	// Close the sockets; the proxy lets go of every one.
	for i, c := range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(websocket.StatusNormalClosure, "soak over"); err != nil {
				t.Errorf("close socket %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	await.Until(t, waitTimeout, "cairn_app_proxy_websockets back to 0", func() bool {
		return d.metric("cairn_app_proxy_websockets") == 0
	})
	var gors float64
	await.Until(t, waitTimeout, fmt.Sprintf("the goroutines back to at most %.0f + %d", goroutinesBefore, soakGoroutineSlack), func() bool {
		gors = d.metric("go_goroutines")
		return gors <= goroutinesBefore+soakGoroutineSlack
	})
	t.Logf("after the sockets closed: %.0f goroutines (%.0f before)", gors, goroutinesBefore)
}

// startEchoApp builds the echo app, uploads it into a folder and starts
// it in a session on pre-opened port 8080; it returns the session's id
// once the session runs.
func startEchoApp(t *testing.T, d *devServer) string {
	t.Helper()
	bin, err := apptest.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	folder := d.mkfolder("echo-app")
	d.raw("PUT", "/v1/vfolders/"+folder+"/files/content?path="+apptest.BinaryName, bytes.NewReader(raw), http.StatusCreated)
	c := d.create(map[string]any{
		"command":       apptest.Command("echo-app", 8080),
		"resources":     map[string]any{"cpu": 1, "mem": "256m"},
		"preopen_ports": []int{8080},
		"mounts":        []map[string]any{{"name": "echo-app", "permission": "ro"}},
	})
	d.awaitStatus(c.ID, c.Position, "RUNNING")
	return c.ID
}

// echoOnce sends msg and reads it back.
func echoOnce(ctx context.Context, c *websocket.Conn, msg string) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	typ, got, err := c.Read(ctx)
	if err != nil {
		return fmt.Errorf("read the echo: %w", err)
	}
	if typ != websocket.MessageText || string(got) != msg {
		return fmt.Errorf("echo %v %q, want text %q", typ, got, msg)
	}
	return nil
}

// metrics reads the server's /metrics: the value of every series without
// labels.
func (d *devServer) metrics() map[string]float64 {
	d.t.Helper()
	res, err := d.client.Get(d.api + "/metrics")
	if err != nil {
		d.t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		d.t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		d.t.Fatalf("GET /metrics: %v", err)
	}
	return out
}

// metric is one series of metrics; absent is a failure.
func (d *devServer) metric(name string) float64 {
	d.t.Helper()
	v, ok := d.metrics()[name]
	if !ok {
		d.t.Fatalf("/metrics has no %s", name)
	}
	return v
}

// plainCairn builds cairn without the race detector for this test.
func plainCairn(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cairn")
	cmd := exec.Command("go", "build", "-tags="+buildTags, "-o", bin, "github.com/cairnhq/cairn/cmd/cairn")
	cmd.Dir = ".." // the module's root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cairn without the race detector: %v\n%s", err, out)
	}
	return bin
}
