package projections

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults applied by Options.WithDefaults to zero fields.
const (
	DefaultBatchSize       = 500
	DefaultMaxAttempts     = 5
	DefaultRetryBackoff    = 100 * time.Millisecond
	DefaultMaxRetryBackoff = 5 * time.Second
	DefaultCheckpointEvery = 10000
	DefaultYield           = 0.25

	maxBatchSize = 100000
)

// Options tune a Projector. The zero value is valid: every zero field takes
// its default.
type Options struct {
	// BatchSize is the most events one transaction applies (default 500).
	// A batch is also cut when no more events are buffered, so an idle log
	// is applied at once. Larger batches replay faster but hold SQLite's
	// write lock longer.
	BatchSize int
	// MaxAttempts bounds the tries of one batch whose transaction fails
	// (a busy database, a lost connection, an Apply error) before the
	// projector stops with the error (default 5). Decode errors stop it at
	// once; a full disk (KindUnavailable) never does: the projector pauses
	// and tries again until it commits.
	MaxAttempts int
	// RetryBackoff is the wait after the first failed try; it doubles up
	// to MaxRetryBackoff (defaults 100ms and 5s).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// CheckpointEvery is how many events the projection does not handle
	// may pass before their position is written on its own (default
	// 10000); it bounds what a restart reads again for nothing.
	CheckpointEvery int
	// Yield applies to SQLite only, on a database built with NewSQLite:
	// while catching up, the projector pauses after each batch for this
	// fraction of the time the batch held the write lock, so the event
	// store's appends are not starved (default 0.25; a negative value
	// disables the pause, for an offline rebuild). A database given
	// SQLiteOptions.LockWrites needs no pause: its batches and the store's appends take
	// the write lock in turns (sqlite.Store.LockWrites).
	Yield float64
	// Logger receives the projector's logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics, if set, records the projector's progress (see NewMetrics).
	Metrics *Metrics
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.MaxRetryBackoff == 0 {
		o.MaxRetryBackoff = DefaultMaxRetryBackoff
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.Yield == 0 {
		o.Yield = DefaultYield
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every problem of o at once. Zero fields are valid.
func (o Options) Validate() error {
	var errs []error
	if o.BatchSize < 0 || o.BatchSize > maxBatchSize {
		errs = append(errs, fmt.Errorf("batch size %d: must be between 1 and %d", o.BatchSize, maxBatchSize))
	}
	if o.MaxAttempts < 0 || o.MaxAttempts > 1000 {
		errs = append(errs, fmt.Errorf("max attempts %d: must be between 1 and 1000", o.MaxAttempts))
	}
	if o.RetryBackoff < 0 || o.MaxRetryBackoff < 0 {
		errs = append(errs, fmt.Errorf("retry backoff %s / max %s: must not be negative", o.RetryBackoff, o.MaxRetryBackoff))
	}
	if o.CheckpointEvery < 0 {
		errs = append(errs, fmt.Errorf("checkpoint every %d: must not be negative", o.CheckpointEvery))
	}
	if o.Yield > 10 || o.Yield != o.Yield {
		errs = append(errs, fmt.Errorf("yield %v: must be at most 10 (negative disables it)", o.Yield))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("projections: invalid options: %w", err)
	}
	return nil
}

// logValue is the effective configuration, for the start-up log line.
func (o Options) logValue() slog.Value {
	return slog.GroupValue(
		slog.Int("batch_size", o.BatchSize),
		slog.Int("max_attempts", o.MaxAttempts),
		slog.Duration("retry_backoff", o.RetryBackoff),
		slog.Duration("max_retry_backoff", o.MaxRetryBackoff),
		slog.Int("checkpoint_every", o.CheckpointEvery),
		slog.Float64("yield", o.Yield),
		slog.Bool("metrics", o.Metrics != nil),
	)
}
