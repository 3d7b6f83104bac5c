package sessionlimits

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/domain"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultInterval = 5 * time.Second
	DefaultActor    = "system:session-limits"
)

// Config configures a Manager. The zero value is valid.
type Config struct {
	// Interval is how often limits are checked once the log is caught up
	// (default 5s): a session ends at most this long after its limit.
	Interval time.Duration
	// Actor is recorded as the actor of every command the manager sends
	// (default "system:session-limits").
	Actor string
	// Clock tells the time limits are measured with (default time.Now).
	// It must agree with the command handlers' clock, which stamps events.
	Clock func() time.Time
	// Logger receives the manager's logs (default slog.Default()).
	Logger *slog.Logger
	// OnCheck, when set, is called after every check with what it did.
	OnCheck func(Report)
	// Settings are the run-time settings' defaults (the server's flags):
	// session.default_idle_timeout applies until an admin sets it.
	Settings domain.SettingDefaults
}

// Report is what one check did.
type Report struct {
	// Position is the log position the check's view had folded.
	Position uint64
	// Ended is the number of sessions it terminated.
	Ended int
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
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
	return c
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %v: must not be negative", c.Interval))
	}
	if err := c.Settings.Check("sessionlimits.config"); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	return errors.Join(errs...)
}

// LogValue prints the effective configuration.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("interval", c.Interval), slog.String("actor", c.Actor))
}
