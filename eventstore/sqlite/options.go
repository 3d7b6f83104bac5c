package sqlite

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// Defaults applied by Options.WithDefaults to zero fields.
const (
	DefaultSynchronous = "FULL"
	DefaultMaxBatch    = 256
	DefaultBusyTimeout = 5 * time.Second
	DefaultReadConns   = 4

	// maxMaxEventSize stays well under SQLite's default SQLITE_MAX_LENGTH
	// (1e9 bytes), so an accepted event can always be stored.
	maxMaxEventSize = 256 << 20
	maxMaxBatch     = 65536
	maxReadConns    = 1024
)

// Options configure a Store. The zero value is valid: every zero field takes
// its default.
type Options struct {
	// MaxEventSize limits one event's data plus metadata, in bytes
	// (default eventstore.DefaultMaxEventSize).
	MaxEventSize int
	// Synchronous is SQLite's synchronous setting for the write connection:
	// "FULL" (default: a commit is on disk when Append returns) or "NORMAL"
	// (in WAL mode, a commit survives a crash of the process but may be lost
	// on power failure).
	Synchronous string
	// MaxBatch is the largest number of appends grouped in one transaction
	// (default 256).
	MaxBatch int
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing (default 5s).
	BusyTimeout time.Duration
	// ReadConns is the size of the read connection pool (default 4).
	ReadConns int
	// TailEvents is how many of the latest committed events ReadAll
	// serves from memory (default DefaultTailEvents; negative: none).
	TailEvents int
	// Logger receives the store's logs (default slog.Default()).
	Logger *slog.Logger

	// checkpoint is the checkpointer's pace (default checkpointInterval and
	// resetFrames). It is not exported: the package's tests set it, before
	// Open starts the checkpointer, to make it run often.
	checkpoint checkpointPace
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MaxEventSize == 0 {
		o.MaxEventSize = eventstore.DefaultMaxEventSize
	}
	if o.Synchronous == "" {
		o.Synchronous = DefaultSynchronous
	}
	o.Synchronous = strings.ToUpper(o.Synchronous)
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.ReadConns == 0 {
		o.ReadConns = DefaultReadConns
	}
	if o.TailEvents == 0 {
		o.TailEvents = DefaultTailEvents
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.checkpoint.interval == 0 {
		o.checkpoint.interval = checkpointInterval
	}
	if o.checkpoint.resetFrames == 0 {
		o.checkpoint.resetFrames = resetFrames
	}
	return o
}

// Validate reports every problem of o at once. Zero fields are valid (they
// take their defaults).
func (o Options) Validate() error {
	var errs []error
	if o.MaxEventSize < 0 || o.MaxEventSize > maxMaxEventSize {
		errs = append(errs, fmt.Errorf("max event size %d: must be between 1 and %d bytes", o.MaxEventSize, maxMaxEventSize))
	}
	switch strings.ToUpper(o.Synchronous) {
	case "", "FULL", "NORMAL":
	default:
		errs = append(errs, fmt.Errorf("synchronous %q: must be FULL or NORMAL", o.Synchronous))
	}
	if o.MaxBatch < 0 || o.MaxBatch > maxMaxBatch {
		errs = append(errs, fmt.Errorf("max batch %d: must be between 1 and %d", o.MaxBatch, maxMaxBatch))
	}
	if o.BusyTimeout < 0 {
		errs = append(errs, fmt.Errorf("busy timeout %s: must not be negative", o.BusyTimeout))
	} else if o.BusyTimeout%time.Millisecond != 0 {
		errs = append(errs, fmt.Errorf("busy timeout %s: must be a whole number of milliseconds", o.BusyTimeout))
	}
	if o.ReadConns < 0 || o.ReadConns > maxReadConns {
		errs = append(errs, fmt.Errorf("read conns %d: must be between 1 and %d", o.ReadConns, maxReadConns))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eventstore/sqlite: invalid options: %w", err)
	}
	return nil
}

// logValue is the effective configuration, for the start-up log line.
func (o Options) logValue() slog.Value {
	return slog.GroupValue(
		slog.Int("max_event_size", o.MaxEventSize),
		slog.String("synchronous", o.Synchronous),
		slog.Int("max_batch", o.MaxBatch),
		slog.Duration("busy_timeout", o.BusyTimeout),
		slog.Int("read_conns", o.ReadConns),
		slog.Int("tail_events", o.TailEvents),
	)
}
