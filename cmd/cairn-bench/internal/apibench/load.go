package apibench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/cairnhq/cairn/infra/auth/signing"
)

// WhoamiPath is the default route: authenticated, and cheap once
// authenticated (it answers the principal authentication resolved).
const WhoamiPath = "/v1/auth/whoami"

// APIVersion is what the clients send in X-BackendAI-Version.
const APIVersion = "v8.20240915"

// client is the load generator's HTTP client: keep-alive connections, at
// least one idle connection per concurrent client kept.
type client struct {
	http *http.Client
	// compat signs as Backend.AI's clients do, instead of Cairn's strict
	// mode (signing.SignHTTPStrict: body hash, nonce, accepted once).
	compat bool
}

func newClient(conns int) *client {
	t := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &client{http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

func (c *client) close() { c.http.CloseIdleConnections() }

// signedGet signs a GET of url with k at the current time (strict mode
// unless c.compat), sends it, reads the whole answer and returns its
// status.
func (c *client) signedGet(ctx context.Context, url string, k Keypair) (int, error) {
	return c.signed(ctx, http.MethodGet, url, nil, k)
}

// signedPost signs a POST of the JSON body to url as signedGet signs a
// GET, sends it and returns the answer's status.
func (c *client) signedPost(ctx context.Context, url string, body []byte, k Keypair) (int, error) {
	return c.signed(ctx, http.MethodPost, url, body, k)
}

func (c *client) signed(ctx context.Context, method, url string, body []byte, k Keypair) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	sign := signing.SignHTTPStrict
	if c.compat {
		sign = signing.SignHTTP
	}
	if err := sign(req, k.AccessKey, k.SecretKey, APIVersion, time.Now()); err != nil {
		return 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return resp.StatusCode, err
}

// load is what one round of load did.
type load struct {
	// Requests answered 200 within the round.
	Requests int
	// Elapsed is from the start until the last client finished.
	Elapsed time.Duration
	// Latencies of the answered requests, sorted.
	Latencies []time.Duration
	// CPU is the process's CPU time (user + system) during the round:
	// server and load generator.
	CPU time.Duration
}

// PerSecond is the round's throughput.
func (l load) PerSecond() float64 { return float64(l.Requests) / l.Elapsed.Seconds() }

// drive runs clients concurrent clients sending signed GETs of url for d.
// Each client sends its next request when the previous one is answered
// (closed loop); a request's latency is from signing it to having read
// its whole answer. Any failure (an error, a status other than 200) ends
// the round and is returned.
func drive(ctx context.Context, c *client, url string, k Keypair, clients int, d time.Duration) (load, error) {
	return driveWith(ctx, clients, d, http.StatusOK, "GET "+url, func(ctx context.Context) (int, error) { return c.signedGet(ctx, url, k) })
}

// driveWith runs clients concurrent clients sending requests with send for
// d, closed loop, as drive does; an answer other than want ends the round
// (what names the request in the error).
func driveWith(ctx context.Context, clients int, d time.Duration, want int, what string, send func(context.Context) (int, error)) (load, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstEr error
		perCli  = make([][]time.Duration, clients)
	)
	fail := func(err error) {
		mu.Lock()
		if firstEr == nil {
			firstEr = err
		}
		mu.Unlock()
		cancel()
	}
	cpu0 := processCPU()
	start := time.Now()
	deadline := start.Add(d)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				status, err := send(ctx)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					break
				}
				if status != want {
					fail(fmt.Errorf("%s: status %d", what, status))
					break
				}
				lat = append(lat, time.Since(t0))
			}
			perCli[i] = lat
		}()
	}
	wg.Wait()
	l := load{Elapsed: time.Since(start), CPU: processCPU() - cpu0}
	if firstEr != nil {
		return l, firstEr
	}
	if err := ctx.Err(); err != nil {
		return l, err
	}
	for _, lat := range perCli {
		l.Latencies = append(l.Latencies, lat...)
	}
	l.Requests = len(l.Latencies)
	slices.Sort(l.Latencies)
	return l, nil
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// durations; 0 when there are none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted)) * p / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
