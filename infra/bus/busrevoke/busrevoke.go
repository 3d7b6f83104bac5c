// Package busrevoke keeps a running bus's revoked user keys in step with
// the event log. An agent's bus key is revoked by an
// agent.enrollment-revoked event (DELETE /v1/agents/{id}/enrollment, or
// a re-enrollment replacing the key); a Follower folds every such event
// from the start of the log and, once caught up and on every new one,
// signs the account JWT with all of them (busauth.Keys.AccountJWT) and
// hands it to the server (natsembed.Server.UpdateAccount), which
// disconnects and refuses the revoked keys. Folding from 0 at every start
// makes revocations survive restarts.
package busrevoke

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Log is where the follower reads the events (an eventstore.Store).
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
}

// AccountSigner signs the account JWT with revoked keys
// (busauth.Keys.AccountJWT).
type AccountSigner interface {
	AccountJWT(revoked map[string]time.Time) (string, error)
}

// AccountUpdater takes the new account JWT on the running server
// (natsembed.Server.UpdateAccount).
type AccountUpdater interface {
	UpdateAccount(accountJWT string) error
}

// Config tunes a Follower.
type Config struct {
	// Clock reads the time (default time.Now): a key is revoked from the
	// later of its event's time and now (a revoked key never comes back,
	// and the signer's clock may run ahead of the event's).
	Clock  func() time.Time
	Logger *slog.Logger
	// Registerer takes the follower's metrics (none when nil).
	Registerer prometheus.Registerer
}

// WithDefaults returns c with the zero fields set.
func (c Config) WithDefaults() Config {
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate has nothing to refuse yet: every field has a default.
func (c Config) Validate() error { return nil }

// Follower folds revocations and applies them to the server.
type Follower struct {
	cfg      Config
	log      Log
	keys     AccountSigner
	server   AccountUpdater
	revoked  map[string]time.Time
	caughtUp chan struct{}
	once     sync.Once
	gauge    prometheus.Gauge
	mu       sync.Mutex
	applied  int
}

// New returns a follower of log that updates server with JWTs signed by
// keys.
func New(cfg Config, log Log, keys AccountSigner, server AccountUpdater) (*Follower, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if log == nil || keys == nil || server == nil {
		errs = append(errs, errors.New("busrevoke: a log, the keys and the server are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	f := &Follower{cfg: cfg, log: log, keys: keys, server: server, revoked: map[string]time.Time{}, caughtUp: make(chan struct{}),
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_bus_revoked_user_keys",
			Help: "User keys (agents' bus credentials) the embedded bus refuses."})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(f.gauge); err != nil {
			return nil, fmt.Errorf("busrevoke: metrics: %w", err)
		}
	}
	return f, nil
}

// CaughtUp is closed once every revocation already in the log is applied.
func (f *Follower) CaughtUp() <-chan struct{} { return f.caughtUp }

// Applied is how many revoked keys the server has been given so far.
func (f *Follower) Applied() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// Run follows the log from its start until ctx ends.
func (f *Follower) Run(ctx context.Context) error {
	sub, err := f.log.Subscribe(ctx, 0)
	if err != nil {
		return fmt.Errorf("busrevoke: subscribe: %w", err)
	}
	defer sub.Close()
	live := false
	for m := range sub.Messages() {
		if m.CaughtUp {
			live = true
			if err := f.apply(); err != nil {
				return err
			}
			f.once.Do(func() { close(f.caughtUp) })
			continue
		}
		if m.Event.Type != domain.TypeAgentEnrollmentRevoked {
			continue
		}
		ev, err := domain.DecodeEvent(m.Event.Type, m.Event.Version, m.Event.Data)
		if err != nil {
			return fmt.Errorf("busrevoke: position %d: %w", m.Event.Position, err)
		}
		r, ok := ev.(domain.AgentEnrollmentRevoked)
		if !ok || r.UserKey == "" {
			continue // a withdrawn offer: no key to refuse
		}
		at := f.cfg.Clock().UTC()
		if r.At.After(at) {
			at = r.At
		}
		f.revoked[r.UserKey] = at
		f.cfg.Logger.Info("agent bus key revoked", "stream", m.Event.Stream, "user_key", r.UserKey, "reason", r.Reason)
		if live {
			if err := f.apply(); err != nil {
				return err
			}
		}
	}
	if err := sub.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("busrevoke: %w", err)
	}
	return nil
}

// apply signs the account JWT with every revoked key and updates the
// server.
func (f *Follower) apply() error {
	accountJWT, err := f.keys.AccountJWT(f.revoked)
	if err != nil {
		return fmt.Errorf("busrevoke: sign the account: %w", err)
	}
	if err := f.server.UpdateAccount(accountJWT); err != nil {
		return fmt.Errorf("busrevoke: update the bus: %w", err)
	}
	f.mu.Lock()
	f.applied = len(f.revoked)
	f.mu.Unlock()
	f.gauge.Set(float64(len(f.revoked)))
	return nil
}
