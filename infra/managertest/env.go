package managertest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// WaitTimeout bounds every wait: generous, as the race detector and a
// shared machine slow things down.
const WaitTimeout = 30 * time.Second

// T0 is the time the test clock starts at.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Logger collects a test's logs and prints them only if the test fails.
func Logger(t testing.TB) *slog.Logger {
	t.Helper()
	w := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", w.String())
		}
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Env is a real SQLite store with the command handlers over it.
type Env struct {
	T        testing.TB
	Store    *sqlite.Store
	Handlers *commands.Handlers
	Clock    *Clock
	Log      *slog.Logger
	MD       commands.Metadata

	sealMu   sync.Mutex
	sealKeys map[string]nkeys.KeyPair
}

// SealKey is agentID's public sealing key in this test (made on first
// use): RegisterAgent and Report announce it, Listen opens with it.
func (e *Env) SealKey(agentID string) string {
	pub, err := e.sealKeyPair(agentID).PublicKey()
	if err != nil {
		e.T.Fatal(err)
	}
	return pub
}

func (e *Env) sealKeyPair(agentID string) nkeys.KeyPair {
	e.sealMu.Lock()
	defer e.sealMu.Unlock()
	if kp, ok := e.sealKeys[agentID]; ok {
		return kp
	}
	kp, err := nkeys.CreateCurveKeys()
	if err != nil {
		e.T.Fatal(err)
	}
	if e.sealKeys == nil {
		e.sealKeys = map[string]nkeys.KeyPair{}
	}
	e.sealKeys[agentID] = kp
	return kp
}

// Option adjusts the command handlers' options New builds.
type Option func(*commands.Options)

// WithSettings gives the handlers the run-time settings' defaults, as a
// server gives the same defaults to its handlers and its managers.
func WithSettings(d domain.SettingDefaults) Option {
	return func(o *commands.Options) { o.Settings = d }
}

// New opens a store in a temporary directory, closed when the test ends.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	log := Logger(t)
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), sqlite.Options{Logger: log})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
	})
	clock := &Clock{now: T0}
	o := commands.Options{PasswordHasher: plainHasher{}}
	for _, opt := range opts {
		opt(&o)
	}
	h, err := commands.NewHandlers(store, clock.Now, o)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{T: t, Store: store, Handlers: h, Clock: clock, Log: log, MD: commands.Metadata{Actor: "u1"}}
}

// Go runs fn in the background until the returned stop is called or the
// test ends; stop cancels fn's context, waits for it and checks it
// returned nil.
func Go(t testing.TB, name string, fn func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			case <-time.After(WaitTimeout):
				t.Errorf("%s did not return after its context ended", name)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// RegisterAgent registers an agent through the command.
func (e *Env) RegisterAgent(spec domain.AgentSpec) {
	e.T.Helper()
	if spec.SealKey == "" {
		spec.SealKey = e.SealKey(spec.ID)
	}
	if _, err := e.Handlers.RegisterAgent.Handle(context.Background(), e.MD, commands.RegisterAgent{Spec: spec}); err != nil {
		e.T.Fatal(err)
	}
}

// Request requests a session through the command.
func (e *Env) Request(spec domain.SessionSpec) commands.RequestSessionResult {
	e.T.Helper()
	res, err := e.Handlers.RequestSession.Handle(context.Background(), e.MD, commands.RequestSession{Spec: spec})
	if err != nil {
		e.T.Fatal(err)
	}
	return res
}

// Events reads a stream (none when it does not exist).
func (e *Env) Events(stream string) []eventstore.RecordedEvent {
	e.T.Helper()
	evs, err := e.Store.ReadStream(context.Background(), stream, eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		e.T.Fatal(err)
	}
	return evs
}

// Decoded reads and decodes a stream.
func (e *Env) Decoded(stream string) []domain.RecordedEvent {
	e.T.Helper()
	out, err := commands.DecodeStream(e.Events(stream))
	if err != nil {
		e.T.Fatal(err)
	}
	return out
}

// Session folds a session's stream.
func (e *Env) Session(id uuid.UUID) *domain.Session {
	e.T.Helper()
	s, err := domain.RehydrateSession(e.Decoded(domain.SessionStream(id).String()))
	if err != nil {
		e.T.Fatal(err)
	}
	return s
}

// Agent folds an agent's stream.
func (e *Env) Agent(id string) *domain.Agent {
	e.T.Helper()
	a, err := domain.RehydrateAgent(e.Decoded(domain.AgentStream(id).String()))
	if err != nil {
		e.T.Fatal(err)
	}
	return a
}

// Count is how many events of a type a stream holds.
func (e *Env) Count(stream, eventType string) int {
	e.T.Helper()
	n := 0
	for _, ev := range e.Events(stream) {
		if ev.Type == eventType {
			n++
		}
	}
	return n
}

// Await blocks until cond holds, checking it once the log is caught up
// and after every new event: the store's subscription wakes it, nothing
// sleeps. cond must only read.
func (e *Env) Await(what string, cond func() bool) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	sub, err := e.Store.Subscribe(ctx, 0)
	if err != nil {
		e.T.Fatal(err)
	}
	defer sub.Close()
	caughtUp := false
	for msg := range sub.Messages() {
		if msg.CaughtUp {
			caughtUp = true
		}
		if caughtUp && cond() {
			return
		}
	}
	e.T.Fatalf("timed out waiting until %s (%v)", what, sub.Err())
}

// AwaitStatus waits until the session reaches status and returns it.
func (e *Env) AwaitStatus(id uuid.UUID, status domain.SessionStatus) *domain.Session {
	e.T.Helper()
	e.Await("session "+id.String()+" is "+string(status), func() bool { return e.Session(id).Status() == status })
	return e.Session(id)
}

// CheckCapacity verifies that on every agent the allocations fit in
// capacity slot by slot and no device is shared beyond its capacity.
func (e *Env) CheckCapacity(agents ...string) {
	e.T.Helper()
	for _, id := range agents {
		a := e.Agent(id)
		if over := a.Occupied().Exceeding(a.Capacity()); len(over) > 0 {
			e.T.Fatalf("agent %s oversubscribed on %v: occupied %v of %v", id, over, a.Occupied(), a.Capacity())
		}
		for _, d := range a.Devices() {
			if occ := a.DeviceOccupied(d.ID); occ > domain.DeviceShareCapacity {
				e.T.Fatalf("agent %s: device %s shared %s times", id, d.ID, occ)
			}
		}
	}
}
