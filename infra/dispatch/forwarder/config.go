package forwarder

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultSaveEvery = 256
	DefaultSaveDelay = time.Second
	DefaultRetryMin  = 100 * time.Millisecond
	DefaultRetryMax  = 10 * time.Second
)

// Config configures a Forwarder. The zero value is valid.
type Config struct {
	// SaveEvery bounds how many events are done between two checkpoint
	// saves while the log is busy (default 256).
	SaveEvery int
	// SaveDelay bounds how long events done stay unsaved when fewer than
	// SaveEvery came (default 1s): a save costs two fsyncs, so a trickle of
	// events is not saved one by one. A stop always saves; a crash
	// republishes at most this much (consumers are idempotent).
	SaveDelay time.Duration
	// RetryMin and RetryMax bound the backoff between attempts to read a
	// session stream or to publish (defaults 100ms and 10s).
	RetryMin time.Duration
	RetryMax time.Duration
	// Logger receives the forwarder's logs (default slog.Default()).
	Logger *slog.Logger
	// MountSources finds the host directories of the virtual folders a
	// session mounts (nil: a kernel whose session mounts folders cannot be
	// created, and its allocation is skipped with an error in the log).
	MountSources MountSources
}

// MountSources finds a virtual folder's directory on the storage host,
// which the agent bind-mounts (infra/vfolders.Storage over vfstorage's
// MountSource). The path is the manager's: an agent on another machine
// must see the storage host at the same path (e.g. the same NFS mount).
type MountSources interface {
	MountSource(host string, id uuid.UUID) (string, error)
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.SaveEvery == 0 {
		c.SaveEvery = DefaultSaveEvery
	}
	if c.SaveDelay == 0 {
		c.SaveDelay = DefaultSaveDelay
	}
	if c.RetryMin == 0 {
		c.RetryMin = DefaultRetryMin
	}
	if c.RetryMax == 0 {
		c.RetryMax = DefaultRetryMax
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.SaveEvery < 0 {
		errs = append(errs, fmt.Errorf("save every %d: must not be negative", c.SaveEvery))
	}
	if c.SaveDelay < 0 {
		errs = append(errs, fmt.Errorf("save delay %v: must not be negative", c.SaveDelay))
	}
	if c.RetryMin < 0 || c.RetryMax < 0 {
		errs = append(errs, fmt.Errorf("retry %v..%v: must not be negative", c.RetryMin, c.RetryMax))
	}
	if c.RetryMin > 0 && c.RetryMax > 0 && c.RetryMin > c.RetryMax {
		errs = append(errs, fmt.Errorf("retry min %v is above retry max %v", c.RetryMin, c.RetryMax))
	}
	return errors.Join(errs...)
}

// LogValue prints the effective configuration.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("save_every", c.SaveEvery),
		slog.Duration("save_delay", c.SaveDelay),
		slog.Duration("retry_min", c.RetryMin),
		slog.Duration("retry_max", c.RetryMax),
	)
}
