package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Rebuild is a rebuild job as the API shows it.
type Rebuild struct {
	ID        string `json:"id"`
	ReadModel string `json:"read_model"`
	// State is running, done or failed (then Error says why).
	State string `json:"state"`
	// Phase is what a running rebuild does: replaying (the log into the
	// shadow copy), catching-up (the live projector held), swapping (the
	// rows copied over), or the State once it ended.
	Phase string `json:"phase"`
	// Position is the log position the rebuilt copy has reached; Head the
	// log's last position when it was last measured.
	Position uint64 `json:"position"`
	Head     uint64 `json:"head"`
	// Events counts the events replayed; Total those in the log when the
	// rebuild started (raised if more came).
	Events          uint64  `json:"events"`
	Total           uint64  `json:"total"`
	EventsPerSecond float64 `json:"events_per_second"`
	// HeldSeconds is how long the live projector was held (the catch-up
	// and the swap): while it is, a wait_for_position beyond its position
	// answers 503.
	HeldSeconds float64    `json:"held_seconds"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	Error       string     `json:"error,omitempty"`
}

// rebuild is a job's state, guarded by its mutex.
type rebuild struct {
	mu sync.Mutex
	v  Rebuild
	// start is when the replay started, for the rate.
	start time.Time
}

func (r *rebuild) snapshot() Rebuild {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

func (r *rebuild) finished() bool { return r.snapshot().State != StateRunning }

func (r *rebuild) update(fn func(v *Rebuild)) {
	r.mu.Lock()
	fn(&r.v)
	r.mu.Unlock()
}

const (
	opStartRebuild = "maintenance.rebuild"
	opGetRebuild   = "maintenance.rebuild.get"
)

// StartRebuild starts rebuilding the read model name online (see the
// package documentation) and returns the job. Unknown names are
// KindInvalid naming the field read_model; a rebuild of the same read
// model still running is KindConflict.
func (s *Service) StartRebuild(name string) (Rebuild, error) {
	runner := s.runner(name)
	if runner == nil {
		return Rebuild{}, domain.Invalid(opStartRebuild, "read_model", "must be one of %s, not %q", strings.Join(s.names(), ", "), name)
	}
	now := s.cfg.Clock()
	job := &rebuild{v: Rebuild{ID: uuid.Must(uuid.NewV7()).String(), ReadModel: name, State: StateRunning, Phase: "replaying", StartedAt: now.UTC()}, start: now}
	s.mu.Lock()
	if slices.ContainsFunc(s.rebuilds, func(j *rebuild) bool { v := j.snapshot(); return v.ReadModel == name && v.State == StateRunning }) {
		s.mu.Unlock()
		return Rebuild{}, domain.Errorf(opStartRebuild, domain.KindConflict, "read model %s is being rebuilt already", name)
	}
	s.rebuilds = keep(s.rebuilds, job)
	s.mu.Unlock()
	s.start(func(ctx context.Context) {
		err := s.rebuild(ctx, job, runner)
		end := s.cfg.Clock()
		job.update(func(v *Rebuild) {
			v.State, v.Phase, v.FinishedAt = StateDone, StateDone, &end
			if err != nil {
				v.State, v.Phase, v.Error = StateFailed, StateFailed, err.Error()
			}
		})
		if err != nil {
			s.cfg.Logger.Error("maintenance: rebuild failed", slog.String("read_model", name), slog.Any("error", err))
		} else {
			s.cfg.Logger.Info("maintenance: rebuilt", slog.String("read_model", name), slog.Any("job", job.snapshot()))
		}
	})
	return job.snapshot(), nil
}

// GetRebuild returns a rebuild job; an unknown id is KindNotFound.
func (s *Service) GetRebuild(id string) (Rebuild, error) {
	u, err := parseID(opGetRebuild, "rebuild", id)
	if err != nil {
		return Rebuild{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.rebuilds {
		if v := j.snapshot(); v.ID == u.String() {
			return v, nil
		}
	}
	return Rebuild{}, domain.NotFound(opGetRebuild, "rebuild")
}

// ListRebuilds returns the rebuilds remembered (every running one and the
// last finished ones), the newest first.
func (s *Service) ListRebuilds() []Rebuild {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Rebuild, 0, len(s.rebuilds))
	for i := len(s.rebuilds) - 1; i >= 0; i-- {
		out = append(out, s.rebuilds[i].snapshot())
	}
	return out
}

// rebuilding reports whether the read model name is being rebuilt.
func (s *Service) rebuilding(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.rebuilds, func(j *rebuild) bool { v := j.snapshot(); return v.ReadModel == name && v.State == StateRunning })
}

// rebuild replays the log into a shadow copy, holds the live projector,
// lets the copy catch up with it, swaps the rows and lets the live
// projector go on from the copy's position.
func (s *Service) rebuild(ctx context.Context, job *rebuild, runner *Runner) (err error) {
	name := runner.p.Name()
	shadow, drop, err := s.cfg.Shadow(ctx, name)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, drop()) }()
	job.mu.Lock()
	job.start = s.cfg.Clock() // the rate counts the replay only
	job.mu.Unlock()
	rm, err := s.cfg.ReadModels(shadow, name)
	if err != nil {
		return err
	}
	sp, err := projections.NewProjector(shadow, s.cfg.Store, rm, projections.Options{Logger: s.cfg.Logger.With(slog.String("rebuild", name))})
	if err != nil {
		return err
	}
	job.mu.Lock()
	start := job.start
	job.mu.Unlock()
	progress := func(done, total uint64) {
		head, _ := projections.Head(ctx, s.cfg.DB)
		pos := sp.Position()
		job.update(func(v *Rebuild) {
			v.Events, v.Total, v.Position = done, total, pos
			if head > 0 {
				v.Head = head
			}
			if secs := s.cfg.Clock().Sub(start).Seconds(); secs > 0 {
				v.EventsPerSecond = float64(done) / secs
			}
		})
	}
	if err := sp.Rebuild(ctx, progress); err != nil {
		return err
	}

	job.update(func(v *Rebuild) { v.Phase = "catching-up" })
	heldAt := s.cfg.Clock()
	release, err := runner.Hold(ctx)
	if err != nil {
		return err
	}
	defer func() {
		release()
		held := s.cfg.Clock().Sub(heldAt).Seconds()
		job.update(func(v *Rebuild) { v.HeldSeconds = held })
	}()
	live := runner.p.Position()
	if err := s.catchUp(ctx, sp, live); err != nil {
		return err
	}
	job.update(func(v *Rebuild) { v.Phase = "swapping" })
	pos, err := projections.Replace(ctx, s.cfg.DB, shadow, rm)
	if err != nil {
		return err
	}
	if pos < live {
		// catchUp saw the copy at live or beyond; its checkpoint says less.
		return fmt.Errorf("maintenance: %s: the rebuilt copy is at %d, behind the live read model's %d", name, pos, live)
	}
	s.mu.Lock()
	if s.replaced == nil {
		s.replaced = map[string]uint64{}
	}
	// Answers were read at positions up to pos before the swap, so the
	// change counts as after pos.
	s.replaced[name] = pos + 1
	s.mu.Unlock()
	head, _ := projections.Head(ctx, s.cfg.DB)
	job.update(func(v *Rebuild) { v.Position, v.Head = pos, max(head, pos) })
	return nil
}

// catchUp runs the shadow projector until it has applied position (and
// stored its checkpoint), then stops it.
func (s *Service) catchUp(ctx context.Context, sp *projections.Projector, position uint64) error {
	if sp.Position() >= position {
		return nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- sp.Run(runCtx) }()
	waitErr := sp.WaitFor(ctx, position)
	cancel()
	// Run stores the position of events it skipped when it stops.
	return errors.Join(waitErr, <-ran)
}
