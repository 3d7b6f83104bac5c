package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/projections"
)

// keepJobs bounds the finished jobs remembered (of each kind).
const keepJobs = 64

// Config is what a Service works with.
type Config struct {
	// Store is the event store; DB the live read models' database beside
	// it (infra/readmodels.Open).
	Store eventstore.Store
	DB    *projections.DB
	// ReadModels builds the read model name over a database (the shadow
	// of a rebuild): infra/readmodels' Set.Select.
	ReadModels func(db *projections.DB, name string) (projections.Projection, error)
	// Shadow opens the empty database a read model is rebuilt into, and
	// how to drop it (infra/readmodels.OpenShadow).
	Shadow func(ctx context.Context, name string) (*projections.DB, func() error, error)
	// System describes the server for System (version, store, bus...).
	System SystemConfig
	// Clock reads the time (default time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
}

// Validate reports every missing part at once.
func (c Config) Validate() error {
	var errs []error
	for _, dep := range []struct {
		name    string
		missing bool
	}{{"Store", c.Store == nil}, {"DB", c.DB == nil}, {"ReadModels", c.ReadModels == nil}, {"Shadow", c.Shadow == nil}} {
		if dep.missing {
			errs = append(errs, fmt.Errorf("maintenance: no %s", dep.name))
		}
	}
	return errors.Join(errs...)
}

// Service runs the maintenance jobs of one server: rebuilds and audit
// verifications, in goroutines of its own that Close stops.
type Service struct {
	cfg     Config
	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu       sync.Mutex
	runners  []*Runner
	replaced map[string]uint64
	rebuilds []*rebuild
	verifies []*verification
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, started: cfg.Clock(), ctx: ctx, cancel: cancel}, nil
}

// Supervise returns the Run of a Runner over p, the live projector of a
// read model: run it instead of p.Run, so that a rebuild can hold it.
func (s *Service) Supervise(p *projections.Projector) func(context.Context) error {
	r := NewRunner(p)
	s.mu.Lock()
	s.runners = append(s.runners, r)
	s.mu.Unlock()
	return r.Run
}

// Replaced returns a position after every answer read from the read model
// name before its rows were last replaced by a rebuild (0 if they never
// were): a cache of its answers that keeps an answer while no change came
// after the position it was read at (httpauth's Freshness) treats this as
// a change, since the swap changes rows without applying an event.
func (s *Service) Replaced(name string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replaced[name]
}

// Close stops the running jobs and waits for them.
func (s *Service) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// runner returns the Runner of the read model name.
func (s *Service) runner(name string) *Runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runners {
		if r.p.Name() == name {
			return r
		}
	}
	return nil
}

// names are the supervised read models' names.
func (s *Service) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.runners))
	for i, r := range s.runners {
		out[i] = r.p.Name()
	}
	return out
}

// start runs fn in a goroutine of the service.
func (s *Service) start(fn func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(s.ctx)
	}()
}

// keep appends j to jobs, dropping the oldest finished ones beyond
// keepJobs.
func keep[J interface{ finished() bool }](jobs []J, j J) []J {
	jobs = append(jobs, j)
	for len(jobs) > keepJobs {
		i := slices.IndexFunc(jobs, func(j J) bool { return j.finished() })
		if i < 0 {
			break
		}
		jobs = slices.Delete(jobs, i, i+1)
	}
	return jobs
}

// Job states.
const (
	StateRunning = "running"
	StateDone    = "done"
	StateFailed  = "failed"
)

// parseID reads a job id; a malformed one is a missing job.
func parseID(op, what, id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.Nil, domain.NotFound(op, what)
	}
	return u, nil
}
