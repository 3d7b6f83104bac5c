package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// Defaults applied by Options.WithDefaults to zero fields.
const (
	DefaultSchema         = "public"
	DefaultMaxConns       = 32
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultNotifyInterval = 5 * time.Millisecond
	DefaultReadAllLimit   = 1000
	DefaultTailEvents     = 8192

	// maxMaxEventSize keeps one event far below PostgreSQL's 1 GB limit on a
	// single value; maxAppendBytes (append.go) bounds a whole append.
	maxMaxEventSize = 256 << 20
	maxMaxConns     = 10000
)

// schemaName is what Options.Schema accepts: a plain identifier, so it can be
// quoted into SQL and into the LISTEN channel name without surprises.
var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Options configure a Store. The zero value is valid: every zero field takes
// its default.
type Options struct {
	// Schema holds the store's tables and function (default "public"). It is
	// created at Open if it does not exist. Letters, digits and '_', at most
	// 63 bytes, not starting with a digit.
	Schema string
	// MaxEventSize limits one event's data plus metadata, in bytes
	// (default eventstore.DefaultMaxEventSize).
	MaxEventSize int
	// MaxConns is the size of the connection pool (default 32). Appends
	// commit faster with more concurrent connections (group commit), so it
	// should be at least the number of concurrent writers. The LISTEN
	// connection is not counted.
	MaxConns int32
	// PollInterval is the longest time a subscription waits before polling
	// when no wake-up comes (default 250ms). Polling is the truth; wake-ups
	// only shorten waits.
	PollInterval time.Duration
	// NotifyInterval is the shortest time between two NOTIFYs this Store sends
	// to wake other processes' subscriptions (default 5ms).
	NotifyInterval time.Duration
	// DisableNotify turns off LISTEN/NOTIFY (e.g. behind a pooler in
	// transaction mode). Subscriptions of other processes then see this
	// Store's appends at their next poll.
	DisableNotify bool
	// ReadAllLimit is the number of events ReadAll returns when called with
	// limit <= 0 (default 1000).
	ReadAllLimit int
	// TailEvents is how many of the latest events of $all the Store keeps
	// in memory for its subscriptions (default 8192, at most 32 MiB of
	// data; negative: none), so that the projectors and managers following
	// the head share one read of each event instead of each querying it.
	TailEvents int
	// Logger receives the store's logs (default slog.Default()).
	Logger *slog.Logger
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.MaxEventSize == 0 {
		o.MaxEventSize = eventstore.DefaultMaxEventSize
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.NotifyInterval == 0 {
		o.NotifyInterval = DefaultNotifyInterval
	}
	if o.ReadAllLimit == 0 {
		o.ReadAllLimit = DefaultReadAllLimit
	}
	if o.TailEvents == 0 {
		o.TailEvents = DefaultTailEvents
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every problem of o at once. Zero fields are valid (they
// take their defaults).
func (o Options) Validate() error {
	var errs []error
	if o.Schema != "" && !schemaName.MatchString(o.Schema) {
		errs = append(errs, fmt.Errorf("schema %q: must be letters, digits and '_', at most 63 bytes, not starting with a digit", o.Schema))
	}
	if o.MaxEventSize < 0 || o.MaxEventSize > maxMaxEventSize {
		errs = append(errs, fmt.Errorf("max event size %d: must be between 1 and %d bytes", o.MaxEventSize, maxMaxEventSize))
	}
	if o.MaxConns < 0 || o.MaxConns > maxMaxConns {
		errs = append(errs, fmt.Errorf("max conns %d: must be between 1 and %d", o.MaxConns, maxMaxConns))
	}
	if o.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("poll interval %s: must not be negative", o.PollInterval))
	}
	if o.NotifyInterval < 0 {
		errs = append(errs, fmt.Errorf("notify interval %s: must not be negative", o.NotifyInterval))
	}
	if o.ReadAllLimit < 0 {
		errs = append(errs, fmt.Errorf("read all limit %d: must not be negative", o.ReadAllLimit))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eventstore/postgres: invalid options: %w", err)
	}
	return nil
}

// logValue is the effective configuration, for the start-up log line.
func (o Options) logValue() slog.Value {
	return slog.GroupValue(
		slog.String("schema", o.Schema),
		slog.Int("max_event_size", o.MaxEventSize),
		slog.Int("max_conns", int(o.MaxConns)),
		slog.Duration("poll_interval", o.PollInterval),
		slog.Duration("notify_interval", o.NotifyInterval),
		slog.Bool("notify", !o.DisableNotify),
		slog.Int("read_all_limit", o.ReadAllLimit),
		slog.Int("tail_events", max(o.TailEvents, 0)),
	)
}
