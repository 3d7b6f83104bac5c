package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/internal/parallel"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Log is what the scheduler reads from the event store: the global log,
// from the start, then live. Every eventstore.Store satisfies it.
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
}

var _ Log = eventstore.Store(nil)

// Commands are the commands the scheduler sends: its whole port to the
// write side. CommandsOf picks them from the full list of handlers.
type Commands struct {
	ScheduleSession       commands.Handler[commands.ScheduleSession, commands.Result]
	ScheduleSessions      commands.Handler[commands.ScheduleSessions, commands.ScheduleSessionsResult]
	UpdatePendingSessions commands.Handler[commands.UpdatePendingSessions, commands.UpdatePendingSessionsResult]
	CancelPendingSession  commands.Handler[commands.CancelPendingSession, commands.Result]
	ReportKernelStatus    commands.Handler[commands.ReportKernelStatus, commands.Result]
	ForceTerminateSession commands.Handler[commands.ForceTerminateSession, commands.Result]
	TerminateSession      commands.Handler[commands.TerminateSession, commands.Result]
	ReleaseAllocation     commands.Handler[commands.ReleaseAllocation, commands.Result]
}

// CommandsOf returns the scheduler's commands among h (none when h is nil).
func CommandsOf(h *commands.Handlers) Commands {
	if h == nil {
		return Commands{}
	}
	return Commands{
		ScheduleSession:       h.ScheduleSession,
		ScheduleSessions:      h.ScheduleSessions,
		UpdatePendingSessions: h.UpdatePendingSessions,
		CancelPendingSession:  h.CancelPendingSession,
		ReportKernelStatus:    h.ReportKernelStatus,
		ForceTerminateSession: h.ForceTerminateSession,
		TerminateSession:      h.TerminateSession,
		ReleaseAllocation:     h.ReleaseAllocation,
	}
}

// validate reports every command missing.
func (c Commands) validate() error {
	var errs []error
	for name, missing := range map[string]bool{
		"ScheduleSession": c.ScheduleSession == nil, "ScheduleSessions": c.ScheduleSessions == nil,
		"UpdatePendingSessions": c.UpdatePendingSessions == nil, "CancelPendingSession": c.CancelPendingSession == nil,
		"ReportKernelStatus": c.ReportKernelStatus == nil, "ForceTerminateSession": c.ForceTerminateSession == nil,
		"TerminateSession": c.TerminateSession == nil, "ReleaseAllocation": c.ReleaseAllocation == nil,
	} {
		if missing {
			errs = append(errs, fmt.Errorf("no %s handler", name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// Scheduler is the placement process manager. Build it with New, run it
// with Run; one Scheduler runs at a time in a cluster (the leader).
type Scheduler struct {
	cfg      Config
	log      Log
	handlers Commands
	logger   *slog.Logger
	md       commands.Metadata

	// waitFor is the position of the scheduler's own last write: a round
	// runs only once the state has folded it, so that it never decides on
	// a view older than its own decisions.
	waitFor uint64
	// started is when Run caught up with the log: phase deadlines count
	// from then at the earliest, so that a manager coming back after a
	// while lets the agents' queued reports land before it judges.
	started time.Time
}

// New checks cfg and builds a scheduler over the store's log and the
// commands it sends (whose handlers must write to the same store).
func New(cfg Config, log Log, handlers Commands) (*Scheduler, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if log == nil {
		errs = append(errs, errors.New("no event log"))
	}
	if err := handlers.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("scheduler: %w", errors.Join(errs...))
	}
	cfg = cfg.WithDefaults()
	return &Scheduler{
		cfg:      cfg,
		log:      log,
		handlers: handlers,
		logger:   cfg.Logger.With("component", "scheduler"),
		md:       commands.Metadata{Actor: cfg.Actor},
	}, nil
}

// Run folds the global log from position 0 into its view of sessions and
// agents, reconciles the allocations a crash may have left half-made, and
// then runs placement rounds until ctx ends (it returns nil then). A full
// round (every PENDING session) runs when an event may let a waiting
// session in (an agent registered or rejoined, an allocation released, a
// session ended, a limit changed), and every Config.Interval when a
// decision may have changed without an event (a starts_at reached, a fifo
// queue with sessions not yet tried, a placement refused); every
// Config.Interval, timeouts are checked and allocations reconciled again;
// when only new sessions arrived, an arrivals round decides on them alone. Everything happens on the calling
// goroutine, so no placement of this scheduler is ever in flight while it
// reconciles.
//
// It returns an error when the log cannot be read or holds an event this
// build cannot decode.
func (s *Scheduler) Run(ctx context.Context) error {
	s.logger.Info("scheduler starting", "config", s.cfg)
	sub, err := s.log.Subscribe(ctx, 0)
	if err != nil {
		return stopped(ctx, fmt.Errorf("scheduler: subscribe: %w", err))
	}
	defer sub.Close()

	st := newState()
	if err := s.catchUp(sub, st); err != nil {
		return stopped(ctx, err)
	}
	s.started = s.cfg.Clock()
	s.logger.Info("scheduler caught up", "position", st.position, "sessions", len(st.sessions), "agents", len(st.agents))

	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	// due: something may let a waiting session in (a full round is owed);
	// tick: Interval passed (timeouts, and a full round if placementDue).
	due, tick, reconcileDue := true, false, true
	for {
		if st.position >= s.waitFor && ctx.Err() == nil {
			if reconcileDue {
				reconcileDue = false
				s.reconcile(ctx, st)
			}
			// A round decides on a view that has folded the reconcile's writes.
			if st.position >= s.waitFor {
				now := s.cfg.Clock()
				periodic := tick
				if due || (tick && st.placementDue(now)) {
					due, tick = false, false
					s.round(ctx, st)
				} else if tick {
					tick = false
					s.checkTimeouts(ctx, st, now)
				}
				if periodic && s.cfg.OnTick != nil {
					s.cfg.OnTick()
				}
			}
			// The arrivals a full round did not take, on a view that has
			// folded the timeouts' writes.
			if len(st.arrivals) > 0 && !due && st.position >= s.waitFor {
				s.arrivalsRound(ctx, st)
			}
		}
		select {
		case <-ctx.Done():
			s.logger.Info("scheduler stopped")
			return nil
		case <-ticker.C:
			tick, reconcileDue = true, true
		case msg, ok := <-sub.Messages():
			if !ok {
				return stopped(ctx, fmt.Errorf("scheduler: subscription ended: %w", sub.Err()))
			}
			wake, err := s.drain(sub, st, msg)
			if err != nil {
				return err
			}
			due = due || wake
		}
	}
}

// catchUp folds everything up to the subscription's CaughtUp marker.
func (s *Scheduler) catchUp(sub eventstore.Subscription, st *state) error {
	for msg := range sub.Messages() {
		batch, caughtUp := take(sub, msg)
		if _, err := st.fold(batch); err != nil {
			return err
		}
		if caughtUp {
			return nil
		}
	}
	return fmt.Errorf("scheduler: subscription ended while catching up: %w", sub.Err())
}

// drain folds msg and whatever else is already buffered (so that a burst
// of requests makes one round, not one round each).
func (s *Scheduler) drain(sub eventstore.Subscription, st *state, msg eventstore.Message) (bool, error) {
	batch, _ := take(sub, msg)
	return st.fold(batch)
}

// maxFold bounds the messages folded at once.
const maxFold = 4096

// take returns msg and the messages already buffered after it, up to
// maxFold, stopping after a CaughtUp marker (caughtUp then).
func take(sub eventstore.Subscription, msg eventstore.Message) (batch []eventstore.Message, caughtUp bool) {
	batch = append(batch, msg)
	for !msg.CaughtUp && len(batch) < maxFold {
		var ok bool
		select {
		case msg, ok = <-sub.Messages():
			if !ok {
				return batch, false // the caller sees the closed channel next
			}
			batch = append(batch, msg)
		default:
			return batch, false
		}
	}
	return batch, msg.CaughtUp
}

// decodeAtOnce is the smallest batch whose events are decoded on several
// goroutines.
const decodeAtOnce = 64

// fold decodes the events of batch (on several goroutines when there are
// many: decoding is most of a fold's work) and folds them in order.
func (st *state) fold(batch []eventstore.Message) (wake bool, err error) {
	events := make([]domain.Event, len(batch))
	errs := make([]error, len(batch))
	decodeOne := func(i int) {
		if !batch[i].CaughtUp {
			events[i], errs[i] = decode(batch[i].Event)
		}
	}
	if len(batch) >= decodeAtOnce {
		parallel.Each(context.Background(), runtime.GOMAXPROCS(0), len(batch), decodeOne)
	} else {
		for i := range batch {
			decodeOne(i)
		}
	}
	for i, m := range batch {
		if m.CaughtUp {
			continue
		}
		if errs[i] != nil {
			return wake, errs[i]
		}
		w, err := st.applyDecoded(m.Event, events[i])
		if err != nil {
			return wake, err
		}
		wake = wake || w
	}
	return wake, nil
}

// wrote records the position of one of the scheduler's own writes.
func (s *Scheduler) wrote(pos uint64) { s.waitFor = max(s.waitFor, pos) }

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
