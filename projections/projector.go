package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/domain"
)

// Projector keeps one projection up to date: see the package
// documentation. It is safe for concurrent use; Run (or Rebuild) runs once
// at a time.
type Projector struct {
	db      *DB
	store   Subscriber
	proj    Projection
	name    string
	handled map[string]bool
	opts    Options
	log     *slog.Logger
	metrics projMetrics

	// active is held by Run and Rebuild.
	active atomic.Bool

	mu sync.Mutex
	// pos is the position the read model reflects: every event up to it
	// is committed or needs no row.
	pos uint64
	// changed is closed and replaced whenever pos or stopped changes.
	changed chan struct{}
	// stopped is true once Run has returned (until it runs again);
	// stopErr is why.
	stopped bool
	stopErr error
	// paused is why the projector is waiting for its database to take
	// writes again; nil when it is not.
	paused error

	caughtUp     chan struct{}
	caughtUpOnce sync.Once
}

// NewProjector builds the projector of p over db, following store. It
// checks p's declarations: a name, known event types (domain.EventTypes),
// at least one table and one migration for db's dialect.
func NewProjector(db *DB, store Subscriber, p Projection, opts Options) (*Projector, error) {
	var errs []error
	if db == nil {
		errs = append(errs, errors.New("no database"))
	}
	if store == nil {
		errs = append(errs, errors.New("no event store"))
	}
	if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if p == nil {
		errs = append(errs, errors.New("no projection"))
	} else if db != nil {
		errs = append(errs, checkProjection(db, p))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("projections: new projector: %w", err)
	}
	opts = opts.WithDefaults()
	handled := make(map[string]bool)
	for _, t := range p.EventTypes() {
		handled[t] = true
	}
	return &Projector{
		db:       db,
		store:    store,
		proj:     p,
		name:     p.Name(),
		handled:  handled,
		opts:     opts,
		log:      opts.Logger.With(slog.String("projection", p.Name())),
		metrics:  opts.Metrics.forProjection(p.Name()),
		changed:  make(chan struct{}),
		caughtUp: make(chan struct{}),
	}, nil
}

// checkProjection reports every problem of p's declarations.
func checkProjection(db *DB, p Projection) error {
	var errs []error
	if p.Name() == "" {
		errs = append(errs, errors.New("projection has no name"))
	}
	known := domain.EventTypes()
	if len(p.EventTypes()) == 0 {
		errs = append(errs, fmt.Errorf("projection %q handles no event type", p.Name()))
	}
	for _, t := range p.EventTypes() {
		if _, ok := slices.BinarySearch(known, t); !ok {
			errs = append(errs, fmt.Errorf("projection %q: unknown event type %q", p.Name(), t))
		}
	}
	if len(p.Tables()) == 0 {
		errs = append(errs, fmt.Errorf("projection %q declares no table", p.Name()))
	}
	if len(p.Migrations(db.dialect)) == 0 {
		errs = append(errs, fmt.Errorf("projection %q has no migrations for %s", p.Name(), db.dialect))
	}
	return errors.Join(errs...)
}

// Name is the projection's name.
func (p *Projector) Name() string { return p.name }

// Run sets the projection up (Setup), then follows the log from its
// checkpoint until ctx ends or an error stops it. Cancelling ctx is a clean
// shutdown: the batch in flight is rolled back (never committed in part),
// the position of skipped events is written if it is owed, and Run returns
// nil. Otherwise it returns why it stopped: an *EventError, a database
// error that outlived Options.MaxAttempts, or the end of the subscription
// (eventstore.ErrClosed when the store closed).
func (p *Projector) Run(ctx context.Context) error {
	if !p.active.CompareAndSwap(false, true) {
		return ErrBusy
	}
	defer p.active.Store(false)
	p.setStopped(false, nil)
	p.log.Info("projections: projector starting", slog.Any("options", p.opts.logValue()))

	err := p.retry(ctx, "setup", func() error { return Setup(ctx, p.db, p.proj) })
	if err == nil {
		err = p.follow(ctx, nil, nil)
	}
	// Once ctx has ended, a failure is the cancellation's doing (drivers
	// do not always wrap the context's error): a clean shutdown. An event
	// that cannot be decoded or applied is still reported.
	var evErr *EventError
	if ctx.Err() != nil && !errors.As(err, &evErr) {
		err = nil
	}
	if err != nil {
		p.log.Error("projections: projector stopped", slog.Uint64("position", p.Position()), slog.Any("error", err))
	} else {
		p.log.Info("projections: projector stopped", slog.Uint64("position", p.Position()))
	}
	p.setStopped(true, err)
	return err
}

// CaughtUp is closed the first time the projector has applied every event
// committed before its subscription started: a readiness signal.
func (p *Projector) CaughtUp() <-chan struct{} { return p.caughtUp }

func (p *Projector) markCaughtUp(pos uint64) {
	p.caughtUpOnce.Do(func() {
		p.log.Info("projections: caught up", slog.Uint64("position", pos))
		close(p.caughtUp)
	})
}

// Position returns the position the read model reflects: every event up to
// it has been applied and committed, or needs no row.
func (p *Projector) Position() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos
}

func (p *Projector) setPosition(pos uint64) {
	p.mu.Lock()
	if pos != p.pos {
		p.pos = pos
		close(p.changed)
		p.changed = make(chan struct{})
	}
	p.mu.Unlock()
	p.metrics.setPosition(pos)
}

// Paused returns why the projector is waiting for its database to take
// writes again (a KindUnavailable error, such as a full disk), or nil when
// it is not: a health signal. A paused projector serves what it has
// applied and resumes on its own.
func (p *Projector) Paused() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// setPaused records why the projector is paused (nil: it is not) and
// reports whether it was not paused before.
func (p *Projector) setPaused(err error) bool {
	p.mu.Lock()
	was := p.paused
	p.paused = err
	p.mu.Unlock()
	if (was == nil) != (err == nil) {
		p.metrics.setPaused(err != nil)
	}
	return was == nil && err != nil
}

func (p *Projector) setStopped(stopped bool, err error) {
	p.mu.Lock()
	p.stopped, p.stopErr = stopped, err
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}
