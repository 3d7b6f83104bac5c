package reports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain/audit"
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
	// DefaultAgentLostTimeout is how long a disconnected agent is waited
	// for before it is given up on: long enough for a node to reboot.
	DefaultAgentLostTimeout = 15 * time.Minute
)

// Config configures a Consumer. The zero value is valid.
type Config struct {
	// Durable names the bus consumer (default "manager").
	Durable string
	// HeartbeatTimeout declares an agent disconnected when nothing was
	// heard from it for this long (default 30s): its sessions are marked
	// DISCONNECTED, keep their allocations, and nothing is torn down.
	HeartbeatTimeout time.Duration
	// AgentLostTimeout gives a silent agent up when nothing was heard from
	// it for this long (default 15m, more than HeartbeatTimeout): its
	// sessions go to ERROR (agent-lost), their allocations are released,
	// and its kernels are removed when it comes back.
	AgentLostTimeout time.Duration
	// CheckInterval is how often liveness is checked (default a quarter of
	// HeartbeatTimeout).
	CheckInterval time.Duration
	// Clock tells the time liveness is measured with (default time.Now).
	Clock func() time.Time
	// Logger receives the consumer's logs (default slog.Default()).
	Logger *slog.Logger
	// Registerer receives the liveness metrics (none when nil).
	Registerer prometheus.Registerer
	// Record writes an audit record (the access log's Writer): a
	// kernel.activity becomes records about its session, which the
	// session-limits manager counts as use. Nil: activity is dropped.
	Record func(context.Context, audit.Record) error
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Durable == "" {
		c.Durable = DefaultDurable
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.AgentLostTimeout == 0 {
		c.AgentLostTimeout = DefaultAgentLostTimeout
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
	if c.AgentLostTimeout < 0 {
		errs = append(errs, fmt.Errorf("agent lost timeout %v: must not be negative", c.AgentLostTimeout))
	}
	if c.CheckInterval < 0 {
		errs = append(errs, fmt.Errorf("check interval %v: must not be negative", c.CheckInterval))
	}
	if d := c.WithDefaults(); c.HeartbeatTimeout >= 0 && c.AgentLostTimeout >= 0 && d.AgentLostTimeout <= d.HeartbeatTimeout {
		errs = append(errs, fmt.Errorf("agent lost timeout %v: must be longer than the heartbeat timeout %v", d.AgentLostTimeout, d.HeartbeatTimeout))
	}
	return errors.Join(errs...)
}

// LogValue prints the effective configuration.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("durable", c.Durable),
		slog.Duration("heartbeat_timeout", c.HeartbeatTimeout),
		slog.Duration("agent_lost_timeout", c.AgentLostTimeout),
		slog.Duration("check_interval", c.CheckInterval),
	)
}
