// Package schedbench measures scheduling end to end: sessions requested
// through the command handlers, the real scheduler loop (log fold,
// placement, writes with expected revisions), and the placements visible
// in the sessions read model. `cairn-bench schedule` runs it on SQLite and
// PostgreSQL; the pure placement algorithm has its own benchmark
// (domain/placement BenchmarkPlace).
//
// The fleet and the queue follow BenchmarkPlace's shapes: agents with 8
// whole GPUs, 8 shareable GPUs or 8 MIG-enabled GPUs; sessions asking
// whole GPUs, fractional shares, a MIG profile or CPU only, one in ten
// with 2 to 4 kernels; more demand than the fleet holds, so the round ends
// with sessions waiting.
package schedbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/placement/benchshape"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// Config sizes a run.
type Config struct {
	Agents   int
	Sessions int
	// Seed makes the fleet and the queue reproducible.
	Seed uint64
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Progress reports the phases (may be nil).
	Progress func(format string, args ...any)
	// Profile, when set, is called as the measured phase starts (the
	// scheduler's start) and the function it returns when the read side
	// shows the last placement: e.g. a CPU profile of just that phase.
	Profile func() (stop func())
}

// DefaultConfig is the scale: 1,000 agents × 8 GPUs, 10,000
// pending sessions.
func DefaultConfig() Config {
	return Config{Agents: 1000, Sessions: 10000, Seed: 1, Timeout: 10 * time.Minute}
}

// Result is one run's figures.
type Result struct {
	Agents, Sessions int
	// Placed sessions were scheduled and visible in the read side.
	Placed int
	// Rounds is how many rounds placed something.
	Rounds int
	// Enqueue is how long requesting the sessions took (16 clients).
	Enqueue time.Duration
	// Schedule runs from the scheduler's start (folding the log included)
	// until the read side shows the last placement.
	Schedule time.Duration
	// CPU is the processor time this process spent over Schedule (user
	// and system, every goroutine: the scheduler, the writes, the
	// projector; not a database server's): steadier than Schedule on a
	// shared machine.
	CPU time.Duration
}

// PlacementsPerSecond is the end-to-end rate.
func (r Result) PlacementsPerSecond() float64 { return float64(r.Placed) / r.Schedule.Seconds() }

// Run registers the fleet, requests the queue, then schedules it and
// waits until the sessions read model shows every placement. store and db
// must be fresh (nothing else in them).
func Run(ctx context.Context, store eventstore.Store, db *projections.DB, cfg Config) (Result, error) {
	if cfg.Agents <= 0 || cfg.Sessions <= 0 {
		return Result{}, errors.New("schedbench: agents and sessions must be positive")
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	quiet := slog.New(slog.DiscardHandler)
	handlers, err := commands.NewHandlers(store, time.Now, commands.Options{})
	if err != nil {
		return Result{}, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 2))
	res := Result{Agents: cfg.Agents, Sessions: cfg.Sessions}

	progress("registering %d agents", cfg.Agents)
	agents := fleet(cfg.Agents)
	if err := parallel(ctx, len(agents), func(i int) error {
		_, err := handlers.RegisterAgent.Handle(ctx, commands.Metadata{Actor: "bench"}, commands.RegisterAgent{Spec: agents[i]})
		return err
	}); err != nil {
		return res, fmt.Errorf("register agents: %w", err)
	}
	progress("requesting %d sessions", cfg.Sessions)
	specs := queue(cfg.Sessions, rng)
	start := time.Now()
	if err := parallel(ctx, len(specs), func(i int) error {
		_, err := handlers.RequestSession.Handle(ctx, commands.Metadata{Actor: "bench"}, commands.RequestSession{Spec: specs[i]})
		return err
	}); err != nil {
		return res, fmt.Errorf("request sessions: %w", err)
	}
	res.Enqueue = time.Since(start)

	// The read side, caught up with the queue before the clock starts.
	rm := sessions.New(db)
	if err := projections.Setup(ctx, db, rm); err != nil {
		return res, err
	}
	proj, err := projections.NewProjector(db, store, rm, projections.Options{Logger: quiet})
	if err != nil {
		return res, err
	}
	projector := background(ctx, proj.Run)
	defer projector.stop()
	select {
	case <-proj.CaughtUp():
	case <-projector.done:
		return res, fmt.Errorf("projector: %w", projector.stop())
	case <-ctx.Done():
		return res, ctx.Err()
	}

	progress("scheduling")
	rounds := make(chan scheduler.RoundReport, 64)
	sched, err := scheduler.New(scheduler.Config{
		// The production interval: periodic rounds (timeouts, reconcile)
		// compete with the writes and the read side for the processor, so
		// a shorter one would measure a busier scheduler than a real one.
		// Rounds woken by events run at once either way.
		Interval: scheduler.DefaultInterval, Logger: quiet,
		// drf never holds a session behind another, so every round places
		// all it can; fifo's head-of-line blocking would measure the queue
		// discipline, not the scheduler.
		Queue:   placement.ResourceGroup{Order: placement.OrderDRF, Selector: placement.SelectorConcentrated},
		OnRound: func(r scheduler.RoundReport) { rounds <- r },
	}, store, scheduler.CommandsOf(handlers))
	if err != nil {
		return res, err
	}
	stopProfile := func() {}
	if cfg.Profile != nil {
		stopProfile = sync.OnceFunc(cfg.Profile())
		defer stopProfile()
	}
	start = time.Now()
	cpuStart := processCPU()
	running := background(ctx, sched.Run)
	defer running.stop()
	var visible time.Time
	for done := false; !done; {
		select {
		case r := <-rounds:
			// A round that refused nothing placed all it could (drf holds
			// no session back): with nothing freed, no later round places
			// more. After a refusal the next periodic round places again.
			done = r.Refused == 0
			if r.Placed == 0 && r.Refused == 0 {
				break
			}
			res.Placed += r.Placed
			res.Rounds++
			if err := proj.WaitFor(ctx, r.Position); err != nil {
				return res, fmt.Errorf("read side: %w", err)
			}
			visible = time.Now()
			res.CPU = processCPU() - cpuStart
			progress("round %d: %d placed (%d refused, %d waiting)", res.Rounds, r.Placed, r.Refused, r.Waiting)
		case <-running.done:
			return res, fmt.Errorf("the scheduler stopped: %v", running.stop())
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.Schedule = visible.Sub(start)
	stopProfile()
	if err := checkVisible(ctx, rm, res.Placed); err != nil {
		return res, err
	}
	return res, nil
}

// task is a component running in the background.
type task struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func background(ctx context.Context, run func(context.Context) error) *task {
	ctx, cancel := context.WithCancel(ctx)
	t := &task{cancel: cancel, done: make(chan struct{})}
	go func() {
		t.err = run(ctx)
		close(t.done)
	}()
	return t
}

// stop cancels the task and returns what it returned; it may be called
// more than once.
func (t *task) stop() error {
	t.cancel()
	<-t.done
	return t.err
}

// checkVisible counts the sessions the read model shows scheduled.
func checkVisible(ctx context.Context, rm *sessions.ReadModel, want int) error {
	f := sessions.Filter{Statuses: []domain.SessionStatus{domain.StatusScheduled}, Limit: sessions.MaxListLimit}
	n := 0
	for {
		page, err := rm.ListSessions(ctx, f)
		if err != nil {
			return err
		}
		n += len(page.Sessions)
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	if n != want {
		return fmt.Errorf("the read side shows %d scheduled sessions, the scheduler placed %d", n, want)
	}
	return nil
}

// parallel runs do(0..n-1) on 16 goroutines and returns the first error.
func parallel(ctx context.Context, n int, do func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// fleet: a quarter of the agents with 8 whole GPUs, 60% with 8 shareable
// GPUs, 15% with 8 MIG-enabled GPUs (one 3g.40gb and two 2g.20gb each).
func fleet(n int) []domain.AgentSpec {
	out := make([]domain.AgentSpec, 0, n)
	for i := range n {
		a := domain.AgentSpec{ID: fmt.Sprintf("node-%04d", i), Architecture: "x86_64", Capacity: benchshape.CPUMem(128, 1024)}
		switch kind := i % 20; {
		case kind < 17:
			a.Capacity[domain.SlotCUDADevice] = domain.Units(8)
			a.Capacity[domain.SlotCUDAShares] = domain.Units(8)
			for g := range 8 {
				a.Devices = append(a.Devices, domain.Device{ID: fmt.Sprintf("GPU-%04d-%d", i, g), Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30})
			}
		default:
			for g := range 8 {
				for j, p := range benchshape.MIGProfiles {
					slot := placement.MIGSlot(p)
					a.Capacity[slot] += domain.Units(1)
					a.Devices = append(a.Devices, domain.Device{ID: fmt.Sprintf("MIG-%04d-%d-%d", i, g, j), Kind: slot, Model: "H100 " + p})
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// queue is the benchmark's pending sessions (benchshape.NewRequest), with
// 200 users.
func queue(n int, rng *rand.Rand) []domain.SessionSpec {
	out := make([]domain.SessionSpec, 0, n)
	for i := range n {
		r := benchshape.NewRequest(rng)
		spec := domain.SessionSpec{
			Name: fmt.Sprintf("bench-%d", i), Owner: domain.Owner{UserID: fmt.Sprintf("user-%03d", i%200), AccessKey: r.AccessKey},
			Domain: "default", Project: "bench", ResourceGroup: "default", Type: domain.SessionBatch,
			Image: "localhost/cairn/base:latest", Command: "true", Resources: r.Slots, Priority: &r.Priority,
		}
		if r.Kernels > 1 {
			spec.ClusterSize = r.Kernels
			if r.MultiNode {
				spec.ClusterMode = domain.ClusterMultiNode
			}
		}
		out = append(out, spec)
	}
	return out
}

// processCPU is the processor time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
