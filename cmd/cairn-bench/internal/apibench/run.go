package apibench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Issue #4's targets.
const (
	// TargetPerSecond is the signed requests/s to sustain with the audit
	// trail on, the load generator on the same machine.
	TargetPerSecond = 5000
	// TargetP99 bounds the client-side p99 latency at that load.
	TargetP99 = 20 * time.Millisecond
	// TargetRatio is the least audited/unaudited throughput ratio: the
	// audit trail may cost at most 20%.
	TargetRatio = 0.8
)

// Config configures a run; DefaultConfig gives the defaults.
type Config struct {
	// Clients is how many clients send requests concurrently, each over
	// its own keep-alive connection.
	Clients int
	// Duration is the length of each measured round.
	Duration time.Duration
	// Rounds is how many measured rounds each mode gets.
	Rounds int
	// Warmup is the length of the unmeasured round each mode gets first.
	Warmup time.Duration
	// Path is the route requested (a cheap authenticated GET).
	Path string
	// CatchUp bounds the wait for the sequencer to seal an audited
	// round's records.
	CatchUp time.Duration
	// Settle is a pause after each round (after the catch-up), so that
	// what the last round left running (projectors following the log)
	// does not weigh on the next one.
	Settle time.Duration
	// Progress, if set, receives a line per round.
	Progress func(format string, args ...any)
	// CompatSigning signs the requests as Backend.AI's clients do
	// (signing.SignHTTP) instead of in Cairn's strict mode
	// (signing.SignHTTPStrict, the default: body hash, nonce, each
	// signature accepted once through the server's replay cache).
	CompatSigning bool
	// Profile, if set, is called as the first measured round of each
	// mode starts, and what it returns as that round's load ends (e.g. a
	// CPU profile of each mode).
	Profile func(Mode) (stop func())
}

// DefaultConfig returns the defaults: 32 clients, 3 rounds of 5s per
// mode after 2s of warm-up, GET /v1/auth/whoami.
func DefaultConfig() Config {
	return Config{Clients: 32, Duration: 5 * time.Second, Rounds: 3, Warmup: 2 * time.Second, Path: WhoamiPath,
		CatchUp: time.Minute, Settle: 500 * time.Millisecond}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Clients < 1 || c.Rounds < 1 {
		errs = append(errs, fmt.Errorf("clients (%d) and rounds (%d) must be at least 1", c.Clients, c.Rounds))
	}
	if c.Duration <= 0 || c.CatchUp <= 0 {
		errs = append(errs, fmt.Errorf("duration (%s) and catch-up (%s) must be positive", c.Duration, c.CatchUp))
	}
	if c.Warmup < 0 || c.Settle < 0 {
		errs = append(errs, fmt.Errorf("warm-up (%s) and settle (%s) must not be negative", c.Warmup, c.Settle))
	}
	if !strings.HasPrefix(c.Path, "/v1/") {
		errs = append(errs, fmt.Errorf("path %q: want an authenticated route under /v1/", c.Path))
	}
	return errors.Join(errs...)
}

// Mode says whether the audit trail records the requests.
type Mode int

// The modes, in report order.
const (
	AuditOn Mode = iota
	AuditOff
)

func (m Mode) String() string {
	if m == AuditOn {
		return "audit on"
	}
	return "audit off"
}

// Round is one measured round.
type Round struct {
	Mode Mode
	// Requests answered (200) during the round.
	Requests int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// CPU is the process's CPU time during the round (server and clients).
	CPU time.Duration
	// Appended and Sealed are the access records the writer appended and
	// the sequencer sealed during the round (audit on).
	Appended, Sealed int64
	// Lag is how long after the round's end the last of its records was
	// sealed (audit on).
	Lag time.Duration
}

// PerSecond is the round's throughput.
func (r Round) PerSecond() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Summary is a mode's rounds taken together.
type Summary struct {
	Mode     Mode
	Rounds   int
	Requests int
	Elapsed  time.Duration
	// P50 and P99 are over every request of the mode's rounds.
	P50, P99         time.Duration
	CPU              time.Duration
	Appended, Sealed int64
	// MaxLag is the longest catch-up of the sequencer after a round.
	MaxLag time.Duration
}

// PerSecond is the mode's throughput over its rounds.
func (s Summary) PerSecond() float64 { return perSecond(int64(s.Requests), s.Elapsed) }

// AppendedPerSecond is the access records appended per second of its rounds.
func (s Summary) AppendedPerSecond() float64 { return perSecond(s.Appended, s.Elapsed) }

// SealedPerSecond is the access records sealed per second of its rounds.
func (s Summary) SealedPerSecond() float64 { return perSecond(s.Sealed, s.Elapsed) }

// CPUPerRequest is the process's CPU time per request.
func (s Summary) CPUPerRequest() time.Duration {
	if s.Requests == 0 {
		return 0
	}
	return s.CPU / time.Duration(s.Requests)
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Result is a run's outcome.
type Result struct {
	Config Config
	Rounds []Round
	On     Summary
	Off    Summary
}

// Ratio is the audited throughput over the unaudited one.
func (r Result) Ratio() float64 {
	if r.Off.PerSecond() == 0 {
		return 0
	}
	return r.On.PerSecond() / r.Off.PerSecond()
}

// Run measures srv (see the package documentation).
func Run(ctx context.Context, srv *Server, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string, ...any) {}
	}
	r := &runner{cfg: cfg, srv: srv, c: newClient(cfg.Clients + 1), latencies: map[Mode][]time.Duration{}, profiled: map[Mode]bool{}}
	r.c.compat = cfg.CompatSigning
	defer r.c.close()
	if cfg.Warmup > 0 {
		for _, m := range []Mode{AuditOn, AuditOff} {
			if _, _, err := r.round(ctx, m, cfg.Warmup); err != nil {
				return Result{}, fmt.Errorf("warm-up, %s: %w", m, err)
			}
		}
	}
	res := Result{Config: cfg}
	for i := range cfg.Rounds {
		r.profile = i < 2 && cfg.Profile != nil
		// ON OFF, OFF ON, ...: drift falls on both modes.
		order := []Mode{AuditOn, AuditOff}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, m := range order {
			round, lat, err := r.round(ctx, m, cfg.Duration)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", i+1, m, err)
			}
			res.Rounds = append(res.Rounds, round)
			r.latencies[m] = append(r.latencies[m], lat...)
			cfg.Progress("round %d, %s: %.0f req/s, p50 %s, p99 %s, sealed %d records %s after the round",
				i+1, m, round.PerSecond(), round.P50, round.P99, round.Appended, round.Lag.Round(time.Millisecond))
		}
	}
	res.On, res.Off = r.summary(res.Rounds, AuditOn), r.summary(res.Rounds, AuditOff)
	return res, nil
}

type runner struct {
	cfg       Config
	srv       *Server
	c         *client
	latencies map[Mode][]time.Duration
	// profile is set while the rounds run that Config.Profile profiles.
	profile  bool
	profiled map[Mode]bool
}

func (r *runner) url(m Mode) string {
	if m == AuditOn {
		return r.srv.AuditedURL + r.cfg.Path
	}
	return r.srv.UnauditedURL + r.cfg.Path
}

// round drives load at m for d, then (audit on) waits until every record
// of it is sealed, and pauses Settle.
func (r *runner) round(ctx context.Context, m Mode, d time.Duration) (Round, []time.Duration, error) {
	before, err := r.quiet(ctx)
	if err != nil {
		return Round{}, nil, err
	}
	var stop func()
	if r.profile && !r.profiled[m] {
		r.profiled[m], stop = true, r.cfg.Profile(m)
	}
	l, err := drive(ctx, r.c, r.url(m), r.srv.User, r.cfg.Clients, d)
	if stop != nil {
		stop()
	}
	if err != nil {
		return Round{}, nil, err
	}
	end := time.Now()
	at, err := r.c.counters(ctx, r.srv.UnauditedURL)
	if err != nil {
		return Round{}, nil, err
	}
	round := Round{Mode: m, Requests: l.Requests, Elapsed: l.Elapsed, P50: percentile(l.Latencies, 50), P99: percentile(l.Latencies, 99), CPU: l.CPU,
		Appended: at.Written - before.Written, Sealed: at.Sealed - before.Sealed}
	switch m {
	case AuditOff:
		if round.Appended != 0 || round.Sealed != 0 {
			return round, nil, fmt.Errorf("the unaudited API's requests were recorded: %d appended, %d sealed", round.Appended, round.Sealed)
		}
	case AuditOn:
		// Each request's record was queued before its answer was sent:
		// every one of them is owed.
		if round.Lag, err = r.catchUp(ctx, before, int64(l.Requests), end); err != nil {
			return round, nil, err
		}
	}
	if r.cfg.Settle > 0 {
		select {
		case <-ctx.Done():
			return round, nil, ctx.Err()
		case <-time.After(r.cfg.Settle):
		}
	}
	return round, l.Latencies, nil
}

// quiet waits until the trail is idle (the counters unchanged for a
// quarter of a second: the sequencer seals at most every 50ms), so that
// records of earlier requests, such as the set-up's, are not counted in
// the next round, and returns the counters.
func (r *runner) quiet(ctx context.Context) (counters, error) {
	const still = 250 * time.Millisecond
	deadline := time.Now().Add(r.cfg.CatchUp)
	last, err := r.c.counters(ctx, r.srv.UnauditedURL)
	for err == nil {
		select {
		case <-ctx.Done():
			return counters{}, ctx.Err()
		case <-time.After(still):
		}
		var now counters
		if now, err = r.c.counters(ctx, r.srv.UnauditedURL); err == nil && now == last {
			return now, nil
		}
		if time.Now().After(deadline) {
			return counters{}, fmt.Errorf("the audit trail did not settle within %s before a round", r.cfg.CatchUp)
		}
		last = now
	}
	return counters{}, err
}

// catchUp waits until want records more than before are written and
// sealed, and returns how long after end that was. More records than
// requests is an error too: the count must be exact.
func (r *runner) catchUp(ctx context.Context, before counters, want int64, end time.Time) (time.Duration, error) {
	deadline := end.Add(r.cfg.CatchUp)
	for {
		now, err := r.c.counters(ctx, r.srv.UnauditedURL)
		if err != nil {
			return 0, err
		}
		written, sealed := now.Written-before.Written, now.Sealed-before.Sealed
		switch {
		case written > want || sealed > want:
			return 0, fmt.Errorf("%d requests, but %d records appended and %d sealed", want, written, sealed)
		case written == want && sealed == want:
			return time.Since(end), nil
		case time.Now().After(deadline):
			return 0, fmt.Errorf("%d requests, but only %d records appended and %d sealed %s after the round", want, written, sealed, r.cfg.CatchUp)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (r *runner) summary(rounds []Round, m Mode) Summary {
	s := Summary{Mode: m}
	for _, rd := range rounds {
		if rd.Mode != m {
			continue
		}
		s.Rounds++
		s.Requests += rd.Requests
		s.Elapsed += rd.Elapsed
		s.CPU += rd.CPU
		s.Appended += rd.Appended
		s.Sealed += rd.Sealed
		s.MaxLag = max(s.MaxLag, rd.Lag)
	}
	lat := r.latencies[m]
	slices.Sort(lat)
	s.P50, s.P99 = percentile(lat, 50), percentile(lat, 99)
	return s
}
