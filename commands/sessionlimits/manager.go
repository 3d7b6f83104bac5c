package sessionlimits

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// Log is what the manager reads from the event store: the global log,
// from the start, then live. Every eventstore.Store satisfies it.
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
}

var _ Log = eventstore.Store(nil)

// Manager ends sessions at their keypair policy's idle timeout and
// maximum lifetime. Build it with New, run it with Run.
type Manager struct {
	cfg       Config
	log       Log
	terminate commands.Handler[commands.TerminateSession, commands.Result]
	logger    *slog.Logger
	md        commands.Metadata
	// started is when Run caught up with the log: idle deadlines count
	// from then at the earliest.
	started time.Time
}

// New checks cfg and builds a manager over the store's log and the
// TerminateSession handler, the one command it sends (which must write to
// the same store; commands.Handlers.TerminateSession).
func New(cfg Config, log Log, terminate commands.Handler[commands.TerminateSession, commands.Result]) (*Manager, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if log == nil {
		errs = append(errs, errors.New("no event log"))
	}
	if terminate == nil {
		errs = append(errs, errors.New("no TerminateSession handler"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("sessionlimits: %w", errors.Join(errs...))
	}
	cfg = cfg.WithDefaults()
	return &Manager{cfg: cfg, log: log, terminate: terminate, logger: cfg.Logger.With("component", "session-limits"),
		md: commands.Metadata{Actor: cfg.Actor}}, nil
}

// Run folds the global log from position 0 and, once caught up, checks
// the limits every Config.Interval until ctx ends (it returns nil then).
// It returns an error when the log cannot be read or holds an event this
// build cannot decode.
func (m *Manager) Run(ctx context.Context) error {
	m.logger.Info("session limits starting", "config", m.cfg)
	sub, err := m.log.Subscribe(ctx, 0)
	if err != nil {
		return stopped(ctx, fmt.Errorf("sessionlimits: subscribe: %w", err))
	}
	defer sub.Close()
	st := newState()
	ticker := time.NewTicker(m.cfg.Interval)
	defer ticker.Stop()
	caughtUp := false
	for {
		select {
		case <-ctx.Done():
			m.logger.Info("session limits stopped")
			return nil
		case msg, ok := <-sub.Messages():
			if !ok {
				return stopped(ctx, fmt.Errorf("sessionlimits: subscription ended: %w", sub.Err()))
			}
			if msg.CaughtUp {
				if !caughtUp {
					caughtUp, m.started = true, m.cfg.Clock()
					m.logger.Info("session limits caught up", "position", st.position, "sessions", len(st.sessions))
				}
				continue
			}
			if err := st.apply(msg.Event); err != nil {
				return err
			}
		case <-ticker.C:
			if caughtUp {
				m.check(ctx, st)
			}
		}
	}
}

// due is one session past a limit.
type due struct {
	id     uuid.UUID
	reason string
	detail string
}

// overdue returns, by session id, the sessions past their lifetime or
// idle limit at now; a session past both ends for its lifetime.
func (m *Manager) overdue(st *state, now time.Time) []due {
	var out []due
	idleDefault, _ := domain.LookupSetting(domain.SettingSessionIdleTimeout)
	// Only placed sessions have a deadline: a long queue of PENDING ones
	// costs nothing here. Ids in byte order are in the order of their text.
	var placed []uuid.UUID
	for id, s := range st.sessions {
		if !s.scheduledAt.IsZero() {
			placed = append(placed, id)
		}
	}
	slices.SortFunc(placed, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range placed {
		s := st.sessions[id]
		p, ok := st.limits.Limits.KeypairPolicy(s.accessKey)
		if !ok {
			continue
		}
		if ends, ok := domain.LifetimeEnds(s.scheduledAt, p.MaxSessionLifetime); ok && !now.Before(ends) {
			out = append(out, due{id, domain.ReasonSessionLifetime, fmt.Sprintf("%s %s since %s", quota.LimitSessionLifetime, seconds(p.MaxSessionLifetime), s.scheduledAt.Format(time.RFC3339))})
			continue
		}
		idle := domain.IdleTimeout(s.typ, p.IdleTimeout, idleDefault.Int(st.setting(domain.SettingSessionIdleTimeout, m.cfg.Settings)))
		if idle > 0 && !s.runningAt.IsZero() && !s.disconnected {
			since := domain.IdleSince(s.runningAt, s.lastAccess, m.started, s.reconnectedAt)
			if !now.Before(domain.IdleEnds(since, idle)) {
				out = append(out, due{id, domain.ReasonIdleTimeout, fmt.Sprintf("%s %s since %s", quota.LimitIdleTimeout, idle, since.Format(time.RFC3339))})
			}
		}
	}
	return out
}

// check terminates every overdue session. A failure is logged and tried
// again at the next check; a session terminated is dropped from the
// state at once (its session.terminating follows in the log).
func (m *Manager) check(ctx context.Context, st *state) {
	report := Report{Position: st.position}
	defer func() {
		if m.cfg.OnCheck != nil {
			m.cfg.OnCheck(report)
		}
	}()
	for _, d := range m.overdue(st, m.cfg.Clock()) {
		if ctx.Err() != nil {
			return
		}
		_, err := m.terminate.Handle(ctx, m.md, commands.TerminateSession{SessionID: d.id, Reason: d.reason})
		if err != nil {
			level := slog.LevelWarn
			if domain.KindOf(err) == domain.KindNotFound {
				level = slog.LevelInfo
			}
			m.logger.Log(ctx, level, "cannot end a session at its limit", "session_id", d.id, "reason", d.reason, "error", err)
			continue
		}
		delete(st.sessions, d.id)
		report.Ended++
		m.logger.Info("session ended at its limit", "session_id", d.id, "reason", d.reason, "limit", d.detail)
	}
}

func seconds(s int64) time.Duration { return time.Duration(s) * time.Second }

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
