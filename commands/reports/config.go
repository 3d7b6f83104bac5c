package reports

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/infra/bus"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	// DefaultDurable is the durable consumer of the reports topic that every
	// manager replica shares.
	DefaultDurable = "manager"
	// DefaultHeartbeatTimeout is three of the agents' default heartbeat
	// intervals (10s).
	DefaultHeartbeatTimeout = 30 * time.Second
)

// Config configures a Consumer. The zero value is valid.
type Config struct {
	// Durable names the bus consumer (default "manager").
	Durable string
	// HeartbeatTimeout declares an agent lost when nothing was heard from
	// it for this long (default 30s).
	HeartbeatTimeout time.Duration
	// CheckInterval is how often liveness is checked (default a quarter of
	// HeartbeatTimeout).
	CheckInterval time.Duration
	// Clock tells the time liveness is measured with (default time.Now).
	Clock func() time.Time
	// Logger receives the consumer's logs (default slog.Default()).
	Logger *slog.Logger
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Durable == "" {
		c.Durable = DefaultDurable
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.CheckInterval == 0 {
		c.CheckInterval = max(c.HeartbeatTimeout/4, time.Millisecond)
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
	if c.Durable != "" {
		if err := bus.ValidateID("durable", c.Durable); err != nil {
			errs = append(errs, err)
		}
	}
	if c.HeartbeatTimeout < 0 {
		errs = append(errs, fmt.Errorf("heartbeat timeout %v: must not be negative", c.HeartbeatTimeout))
	}
	if c.CheckInterval < 0 {
		errs = append(errs, fmt.Errorf("check interval %v: must not be negative", c.CheckInterval))
	}
	return errors.Join(errs...)
}

// LogValue prints the effective configuration.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("durable", c.Durable),
		slog.Duration("heartbeat_timeout", c.HeartbeatTimeout),
		slog.Duration("check_interval", c.CheckInterval),
	)
}
