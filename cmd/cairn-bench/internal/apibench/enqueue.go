package apibench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/images"
)

// Issue #17's targets for POST /v1/sessions.
const (
	// TargetEnqueuePerSecond is the signed session requests/s to sustain
	// with the audit trail on.
	TargetEnqueuePerSecond = 2000
	// TargetEnqueueP99 bounds their client-side p99 latency.
	TargetEnqueueP99 = 50 * time.Millisecond
	// TargetEnqueueFlat is the least ratio of the rate at the longest
	// queue to the rate at the shortest.
	TargetEnqueueFlat = 0.8
)

// SessionsPath is the route the enqueue benchmark posts to.
const SessionsPath = "/v1/sessions"

// EnqueueConfig configures RunEnqueue; DefaultEnqueueConfig gives the
// defaults.
type EnqueueConfig struct {
	// Clients is how many clients post sessions concurrently, each over
	// its own keep-alive connection.
	Clients int
	// Duration is the length of the measured round at each queue length.
	Duration time.Duration
	// Queues are the queue lengths (PENDING sessions of the benchmark's
	// user) a round starts at, ascending. The queue is filled up to each
	// one by the same clients, unmeasured, before its round.
	Queues []int
	// Settle is a pause after filling the queue, before the round, so that
	// the projectors and the scheduler are done with the fill.
	Settle time.Duration
	// Progress, if set, receives a line per step.
	Progress func(format string, args ...any)
	// ProfileLast, if set, is called as the round at the longest queue
	// starts, and what it returns as it ends (e.g. a CPU profile).
	ProfileLast func() (stop func())
}

// DefaultEnqueueConfig returns the defaults: 16 clients, rounds of 5s at
// 0, 10,000 and 50,000 pending sessions.
func DefaultEnqueueConfig() EnqueueConfig {
	return EnqueueConfig{Clients: 16, Duration: 5 * time.Second, Queues: []int{0, 10_000, 50_000}, Settle: 2 * time.Second}
}

// Validate reports every problem at once.
func (c EnqueueConfig) Validate() error {
	var errs []error
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("clients (%d) must be at least 1", c.Clients))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration (%s) must be positive", c.Duration))
	}
	if c.Settle < 0 {
		errs = append(errs, fmt.Errorf("settle (%s) must not be negative", c.Settle))
	}
	if len(c.Queues) == 0 {
		errs = append(errs, errors.New("queues: want at least one queue length"))
	}
	for i, q := range c.Queues {
		if q < 0 || (i > 0 && q <= c.Queues[i-1]) {
			errs = append(errs, fmt.Errorf("queues %v: want ascending lengths, none negative", c.Queues))
			break
		}
	}
	return errors.Join(errs...)
}

// EnqueueRound is one measured round of session requests.
type EnqueueRound struct {
	// Queue and QueueAfter are the PENDING sessions when the round
	// started and when it ended.
	Queue, QueueAfter int
	// Requests answered 201 during the round.
	Requests int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// CPU is the process's CPU time during the round (server and clients).
	CPU time.Duration
	// Memory is the process's memory before the round, once the queue was
	// filled and had settled.
	Memory Memory
}

// Memory is a process's memory at one moment.
type Memory struct {
	// Heap is the Go heap's live bytes after a collection (HeapAlloc
	// right after runtime.GC).
	Heap uint64
	// RSS is the resident set (VmRSS of /proc/self/status): the heap,
	// its free spans not yet returned, stacks, and what SQLite holds.
	RSS uint64
}

// MeasureMemory collects garbage, then reads the process's memory.
func MeasureMemory() Memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Memory{Heap: ms.HeapAlloc, RSS: residentBytes()}
}

// residentBytes is VmRSS from /proc/self/status, 0 where there is none.
func residentBytes() uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if n, err := strconv.ParseUint(f[0], 10, 64); err == nil && len(f) == 2 && f[1] == "kB" {
				return n << 10
			}
		}
	}
	return 0
}

// MemoryPerSession is how many more bytes of heap and RSS the process held
// per pending session at the longest queue than at the shortest (0 with
// fewer than two rounds).
func MemoryPerSession(rounds []EnqueueRound) (heap, rss float64) {
	if len(rounds) < 2 {
		return 0, 0
	}
	first, last := rounds[0], rounds[len(rounds)-1]
	n := float64(last.Queue - first.Queue)
	if n <= 0 {
		return 0, 0
	}
	return (float64(last.Memory.Heap) - float64(first.Memory.Heap)) / n, (float64(last.Memory.RSS) - float64(first.Memory.RSS)) / n
}

// PerSecond is the round's throughput.
func (r EnqueueRound) PerSecond() float64 { return perSecond(int64(r.Requests), r.Elapsed) }

// sessionBody is what every request asks: one kernel of the base image,
// which stays PENDING (the benchmark's server has no agent).
var sessionBody = func() []byte {
	b, err := json.Marshal(map[string]any{
		"name": "bench-queue", "image": images.BaseImage, "project": bootstrap.DefaultScope,
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	})
	if err != nil {
		panic(err)
	}
	return b
}()

// RunEnqueue measures POST /v1/sessions on srv's audited API (every
// request recorded in the audit trail, as `cairn dev` serves it) by
// cfg.Clients signed clients, in one round per queue length of
// cfg.Queues: it fills the user's queue up to the length, then measures
// a round of cfg.Duration. Every session stays PENDING (no agent), so the
// queue only grows.
func RunEnqueue(ctx context.Context, srv *Server, cfg EnqueueConfig) ([]EnqueueRound, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	c := newClient(cfg.Clients)
	defer c.close()
	url := srv.AuditedURL + SessionsPath
	send := func(ctx context.Context) (int, error) { return c.signedPost(ctx, url, sessionBody, srv.User) }
	var out []EnqueueRound
	pending := 0
	for _, q := range cfg.Queues {
		if pending < q {
			progress("filling the queue from %d to %d pending sessions", pending, q)
			n, err := fill(ctx, cfg.Clients, q-pending, send)
			pending += n
			if err != nil {
				return out, fmt.Errorf("fill the queue to %d: %w", q, err)
			}
			select {
			case <-ctx.Done():
				return out, ctx.Err()
			case <-time.After(cfg.Settle):
			}
		}
		mem := MeasureMemory()
		stop := func() {}
		if cfg.ProfileLast != nil && q == cfg.Queues[len(cfg.Queues)-1] {
			stop = cfg.ProfileLast()
		}
		l, err := driveWith(ctx, cfg.Clients, cfg.Duration, http.StatusCreated, "POST "+url, send)
		stop()
		if err != nil {
			return out, fmt.Errorf("round at %d pending: %w", pending, err)
		}
		r := EnqueueRound{Queue: pending, QueueAfter: pending + l.Requests, Requests: l.Requests, Elapsed: l.Elapsed,
			P50: percentile(l.Latencies, 50), P99: percentile(l.Latencies, 99), CPU: l.CPU, Memory: mem}
		pending = r.QueueAfter
		progress("at %d pending: %.0f req/s, p50 %s, p99 %s", r.Queue, r.PerSecond(), ms(r.P50), ms(r.P99))
		out = append(out, r)
	}
	return out, nil
}

// fill sends n requests with send over clients concurrent clients and
// returns how many were answered 201; any other answer stops it.
func fill(ctx context.Context, clients, n int, send func(context.Context) (int, error)) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		left, done atomic.Int64
		wg         sync.WaitGroup
		mu         sync.Mutex
		firstErr   error
	)
	left.Store(int64(n))
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil && left.Add(-1) >= 0 {
				status, err := send(ctx)
				if err == nil && status != http.StatusCreated {
					err = fmt.Errorf("POST %s: status %d", SessionsPath, status)
				}
				if err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					cancel()
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return int(done.Load()), firstErr
}

// EnqueueFlatness is the rate of the round at the longest queue over the
// rate at the shortest (1 is flat).
func EnqueueFlatness(rounds []EnqueueRound) float64 {
	if len(rounds) < 2 || rounds[0].PerSecond() == 0 {
		return 0
	}
	return rounds[len(rounds)-1].PerSecond() / rounds[0].PerSecond()
}

// enqueueTargets are issue #17's targets, each with its verdict: every
// round's rate and p99, and the flatness.
func enqueueTargets(rounds []EnqueueRound) [3]string {
	minRate, maxP99 := 0.0, time.Duration(0)
	for i, r := range rounds {
		if i == 0 || r.PerSecond() < minRate {
			minRate = r.PerSecond()
		}
		maxP99 = max(maxP99, r.P99)
	}
	flat := EnqueueFlatness(rounds)
	return [3]string{
		fmt.Sprintf("≥ %d req/s at every queue length (lowest %.0f) %s", TargetEnqueuePerSecond, minRate, check(minRate >= TargetEnqueuePerSecond)),
		fmt.Sprintf("p99 ≤ %s (highest %s) %s", ms(TargetEnqueueP99), ms(maxP99), check(maxP99 <= TargetEnqueueP99)),
		fmt.Sprintf("rate at the longest queue / at the shortest %.2fx ≥ %.1fx %s", flat, TargetEnqueueFlat, check(flat >= TargetEnqueueFlat)),
	}
}

// WriteEnqueueTable prints the rounds as aligned text, then the targets.
func WriteEnqueueTable(w io.Writer, rounds []EnqueueRound) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PENDING AT START\tAT END\tREQUESTS\tREQ/S\tP50\tP99\tCPU µs/REQ\tHEAP BEFORE\tRSS BEFORE")
	for _, r := range rounds {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\n", r.Queue, r.QueueAfter, r.Requests, r.PerSecond(), ms(r.P50), ms(r.P99), cpuPerRequest(r),
			mib(r.Memory.Heap), mib(r.Memory.RSS))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := enqueueTargets(rounds)
	_, err := fmt.Fprintf(w, "\nTargets: %s; %s; %s\n%s\n", t[0], t[1], t[2], memoryLine(rounds))
	return err
}

// memoryLine says what a pending session costs in memory.
func memoryLine(rounds []EnqueueRound) string {
	heap, rss := MemoryPerSession(rounds)
	if len(rounds) < 2 {
		return "Memory per pending session: needs two queue lengths."
	}
	return fmt.Sprintf("Memory per pending session (longest queue against the shortest, before their rounds): %.0f bytes of live Go heap, %.0f bytes of RSS.", heap, rss)
}

// mib writes bytes in MiB.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// WriteEnqueueMarkdown writes the rounds as a Markdown section: header
// (how it was made), a row per round, the targets.
func WriteEnqueueMarkdown(w io.Writer, rounds []EnqueueRound, header string) error {
	if _, err := fmt.Fprintf(w, "%s\n\n| pending at start | at end | requests | req/s | p50 | p99 | CPU µs/req | heap before | RSS before |\n"+
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", header); err != nil {
		return err
	}
	for _, r := range rounds {
		if _, err := fmt.Fprintf(w, "| %d | %d | %d | %.0f | %s | %s | %d | %s | %s |\n",
			r.Queue, r.QueueAfter, r.Requests, r.PerSecond(), ms(r.P50), ms(r.P99), cpuPerRequest(r), mib(r.Memory.Heap), mib(r.Memory.RSS)); err != nil {
			return err
		}
	}
	t := enqueueTargets(rounds)
	_, err := fmt.Fprintf(w, "\nTargets: %s; %s; %s.\n\n%s\n", t[0], t[1], t[2], memoryLine(rounds))
	return err
}

func cpuPerRequest(r EnqueueRound) int64 {
	if r.Requests == 0 {
		return 0
	}
	return (r.CPU / time.Duration(r.Requests)).Microseconds()
}
