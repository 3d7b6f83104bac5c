package scheduler

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/domain/placement"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultInterval           = 5 * time.Second
	DefaultStartTimeout       = 30 * time.Minute
	DefaultTerminatingTimeout = 10 * time.Minute
	DefaultActor              = "system:scheduler"
)

// Never disables StartTimeout or TerminatingTimeout (whose zero value
// means the default).
const Never time.Duration = -1

// Config configures a Scheduler. The zero value is valid.
type Config struct {
	// Interval is the longest time between two rounds when nothing wakes
	// the scheduler (default 5s). Timeouts are checked every round.
	Interval time.Duration
	// PendingTimeout cancels a session still PENDING this long after it was
	// requested (reason pending-timeout). 0 (the default) never does.
	PendingTimeout time.Duration
	// StartTimeout puts in ERROR (reason failed-to-start) a session that
	// has stayed this long in one phase between SCHEDULED and CREATING
	// (default 30 minutes, long enough for a large image pull; Never
	// disables it).
	StartTimeout time.Duration
	// TerminatingTimeout force-terminates a session TERMINATING for this
	// long (reason force-terminated; default 10 minutes; Never disables
	// it).
	TerminatingTimeout time.Duration
	// Actor is recorded as the actor of every command the scheduler sends
	// (default "system:scheduler").
	Actor string
	// Clock tells the time timeouts are measured with (default time.Now).
	// It must agree with the command handlers' clock, which stamps events.
	Clock func() time.Time
	// Logger receives the scheduler's logs (default slog.Default()).
	Logger *slog.Logger
	// Queue is how PENDING sessions are ordered and placed while resource
	// groups are not wired into the loop (default: fifo, the dispersed
	// selector, a session without room blocks the ones behind it for one
	// round).
	Queue placement.ResourceGroup
	// OnRound, if set, is called after every round (full or arrivals)
	// that had sessions to place (benchmarks, tests).
	OnRound func(RoundReport)
	// OnTick, if set, is called after every periodic round, full or only
	// the timeouts (tests).
	OnTick func()
}

// RoundReport is what a round did.
type RoundReport struct {
	// Placed sessions were scheduled; Refused ones were placed but the
	// write was refused (the state moved: next round); Waiting ones stay
	// PENDING.
	Placed, Refused, Waiting int
	// Sessions is how many sessions the round decided on: every PENDING
	// one in a full round, the arrivals in an arrivals round.
	Sessions int
	// Position is the scheduler's last write: once the read side reaches
	// it, the round's placements are visible.
	Position uint64
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.TerminatingTimeout == 0 {
		c.TerminatingTimeout = DefaultTerminatingTimeout
	}
	if c.Actor == "" {
		c.Actor = DefaultActor
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Queue.Order == "" && c.Queue.Selector == "" && c.Queue.SkipAfterTries == 0 {
		c.Queue = defaultQueue
	}
	return c
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %v: must not be negative", c.Interval))
	}
	if c.PendingTimeout < 0 {
		errs = append(errs, fmt.Errorf("pending timeout %v: must not be negative (0 is never)", c.PendingTimeout))
	}
	if c.StartTimeout < 0 && c.StartTimeout != Never {
		errs = append(errs, fmt.Errorf("start timeout %v: must be positive, 0 (default) or Never", c.StartTimeout))
	}
	if c.TerminatingTimeout < 0 && c.TerminatingTimeout != Never {
		errs = append(errs, fmt.Errorf("terminating timeout %v: must be positive, 0 (default) or Never", c.TerminatingTimeout))
	}
	return errors.Join(errs...)
}

// LogValue prints the effective configuration.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Duration("interval", c.Interval),
		slog.Duration("pending_timeout", c.PendingTimeout),
		slog.Duration("start_timeout", c.StartTimeout),
		slog.Duration("terminating_timeout", c.TerminatingTimeout),
		slog.String("actor", c.Actor),
		slog.String("queue_order", string(c.Queue.Order)),
		slog.String("queue_selector", string(c.Queue.Selector)),
	)
}
