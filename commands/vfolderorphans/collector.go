package vfolderorphans

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Defaults of Config.
const (
	// DefaultGrace is how long a directory must have been left unchanged
	// before it may be collected. A creation makes its directory
	// milliseconds before its append; an hour leaves room for a store
	// that stalls or a clock that jumps.
	DefaultGrace = time.Hour
	// DefaultInterval is the time between two sweeps after the first. A
	// sweep reads the stream of every folder whose directory is older than
	// the grace (about a minute per million folders): orphans are empty
	// directories, collecting them twice a day is plenty.
	DefaultInterval = 12 * time.Hour
)

// Log is what the collector reads of the event store. Every
// eventstore.Store satisfies it.
type Log interface {
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

var _ Log = eventstore.Store(nil)

// Dir is a folder directory on a storage host.
type Dir struct {
	Host    string
	ID      uuid.UUID
	ModTime time.Time
}

// Directories is what the collector needs of the storage hosts;
// infra/vfolders.Storage provides it.
type Directories interface {
	// HostNames lists the configured storage hosts.
	HostNames() []string
	// FolderDirs calls fn for every folder directory of host, stopping at
	// the first error fn returns.
	FolderDirs(ctx context.Context, host string, fn func(Dir) error) error
	// SetAside moves a folder directory out of the folders (to where an
	// operator finds it) and returns where.
	SetAside(ctx context.Context, host string, id uuid.UUID) (string, error)
}

// Config configures a Collector. The zero value is valid.
type Config struct {
	// Grace is how long a directory must have been left unchanged before
	// it may be collected (default DefaultGrace).
	Grace time.Duration
	// Interval is the time between two sweeps (default DefaultInterval).
	Interval time.Duration
	// Clock tells the time (default time.Now).
	Clock func() time.Time
	// Logger receives the collector's logs (default slog.Default()).
	Logger *slog.Logger
	// Registerer receives the metrics (none when nil).
	Registerer prometheus.Registerer
}

// WithDefaults returns c with every zero field set.
func (c Config) WithDefaults() Config {
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Grace < 0 {
		errs = append(errs, fmt.Errorf("vfolderorphans: grace %s: must not be negative", c.Grace))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("vfolderorphans: interval %s: must not be negative", c.Interval))
	}
	return errors.Join(errs...)
}

// Collector sets aside the folder directories no folder owns. Build it
// with New; Run sweeps periodically, Sweep once.
type Collector struct {
	cfg    Config
	log    Log
	dirs   Directories
	logger *slog.Logger
	setAside,
	failed prometheus.Counter
}

// New checks its parts and builds a collector.
func New(cfg Config, log Log, dirs Directories) (*Collector, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if log == nil {
		errs = append(errs, errors.New("vfolderorphans: no event log"))
	}
	if dirs == nil {
		errs = append(errs, errors.New("vfolderorphans: no storage"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg = cfg.WithDefaults()
	c := &Collector{cfg: cfg, log: log, dirs: dirs, logger: cfg.Logger.With("component", "vfolder-orphans"),
		setAside: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_vfolder_orphan_dirs_set_aside_total",
			Help: "Folder directories that no folder owns, moved to their host's .cairn-lost+found."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_vfolder_orphan_sweep_failures_total",
			Help: "Sweeps for orphan folder directories that failed (retried at the next interval)."}),
	}
	if cfg.Registerer != nil {
		for _, m := range []prometheus.Collector{c.setAside, c.failed} {
			if err := cfg.Registerer.Register(m); err != nil {
				return nil, fmt.Errorf("vfolderorphans: metrics: %w", err)
			}
		}
	}
	return c, nil
}

// Run sweeps at once and then every Config.Interval until ctx ends; it
// returns nil then. A failed sweep is logged and counted, and the next one
// tries again.
func (c *Collector) Run(ctx context.Context) error {
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := c.Sweep(ctx); err != nil && ctx.Err() == nil {
			c.failed.Inc()
			c.logger.Error("sweep for orphan folder directories failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Report is what one sweep did.
type Report struct {
	// Checked counts the directories looked up in the log (older than
	// the grace period).
	Checked int
	// SetAside lists the directories moved away, where they went.
	SetAside []string
}

// Sweep goes once over every host's folder directories and sets aside
// those no folder owns. It stops at the first failure to list a host or
// to set a directory aside; a directory whose stream cannot be read is
// skipped (and logged).
func (c *Collector) Sweep(ctx context.Context) (Report, error) {
	var rep Report
	cutoff := c.cfg.Clock().Add(-c.cfg.Grace)
	for _, host := range c.dirs.HostNames() {
		err := c.dirs.FolderDirs(ctx, host, func(d Dir) error {
			if !d.ModTime.Before(cutoff) {
				return nil
			}
			rep.Checked++
			owned, err := c.owned(ctx, d.ID)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				c.logger.Warn("folder directory left alone: its folder cannot be read", "host", d.Host, "folder_id", d.ID, "error", err)
				return nil
			}
			if owned {
				return nil
			}
			where, err := c.dirs.SetAside(ctx, d.Host, d.ID)
			if err != nil {
				return err
			}
			c.setAside.Inc()
			rep.SetAside = append(rep.SetAside, d.Host+":"+where)
			c.logger.Warn("folder directory that no folder owns set aside", "host", d.Host, "folder_id", d.ID, "to", where, "changed", d.ModTime)
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("vfolderorphans: host %s: %w", host, err)
		}
	}
	if len(rep.SetAside) > 0 || rep.Checked > 0 {
		c.logger.Info("swept for orphan folder directories", "checked", rep.Checked, "set_aside", len(rep.SetAside))
	}
	return rep, nil
}

// owned reports whether a folder owns the directory of id: its stream
// holds a folder that was created and not purged. The directory's host is
// not compared: a folder on another host owns no directory here, but a
// host renamed in the configuration must not make every folder an orphan.
func (c *Collector) owned(ctx context.Context, id uuid.UUID) (bool, error) {
	recs, err := c.log.ReadStream(ctx, domain.VFolderStream(id).String(), eventstore.ReadStreamOptions{})
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return false, err
	}
	f, err := domain.RehydrateVFolder(events)
	if err != nil {
		return false, err
	}
	return f.Exists(), nil
}
