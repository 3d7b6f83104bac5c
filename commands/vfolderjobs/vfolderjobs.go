package vfolderjobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Log is what the manager reads of the event store. Every
// eventstore.Store satisfies it.
type Log interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

var _ Log = eventstore.Store(nil)

// Pending lists the folders whose job is unfinished (status cloning or
// delete-ongoing) as of a log position: every event up to it is reflected
// in the list. The vfolders read model implements it.
type Pending interface {
	PendingJobs(ctx context.Context) ([]uuid.UUID, uint64, error)
}

// Storage is the part of the storage port the jobs use. CloneFolder must
// succeed when dst exists already: a target appears only complete, so it
// is the copy of an earlier run that crashed before recording it.
type Storage interface {
	DeleteFolder(ctx context.Context, host string, id uuid.UUID) error
	CloneFolder(ctx context.Context, srcHost string, src uuid.UUID, dstHost string, dst uuid.UUID) error
}

// Finisher records the jobs' outcomes; *commands.Handlers provides it
// (see FromHandlers).
type Finisher struct {
	Clone  commands.Handler[commands.FinishVFolderClone, commands.VFolderResult]
	Delete commands.Handler[commands.FinishVFolderDelete, commands.VFolderResult]
}

// FromHandlers is the Finisher of a set of handlers.
func FromHandlers(h *commands.Handlers) Finisher {
	return Finisher{Clone: h.FinishVFolderClone, Delete: h.FinishVFolderDelete}
}

// DefaultWorkers is how many jobs run at once by default.
const DefaultWorkers = 2

// Config configures a Manager. The zero value is valid.
type Config struct {
	// Workers bounds the jobs that run at once (default 2).
	Workers int
	// Logger receives the manager's logs (default slog.Default()).
	Logger *slog.Logger
}

// WithDefaults returns c with every zero field set.
func (c Config) WithDefaults() Config {
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	if c.Workers < 0 || c.Workers > 64 {
		return fmt.Errorf("vfolderjobs: workers %d: must be between 1 and 64", c.Workers)
	}
	return nil
}

// Manager runs the jobs. Build it with New, run it with Run.
type Manager struct {
	cfg     Config
	log     Log
	pending Pending
	storage Storage
	finish  Finisher
	logger  *slog.Logger

	mu       sync.Mutex
	inFlight map[uuid.UUID]bool
}

// New checks its parts and builds a manager.
func New(cfg Config, log Log, pending Pending, storage Storage, finish Finisher) (*Manager, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range []struct {
		name    string
		missing bool
	}{{"event log", log == nil}, {"pending list", pending == nil}, {"storage", storage == nil},
		{"finish handlers", finish.Clone == nil || finish.Delete == nil}} {
		if p.missing {
			errs = append(errs, fmt.Errorf("vfolderjobs: no %s", p.name))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg = cfg.WithDefaults()
	return &Manager{cfg: cfg, log: log, pending: pending, storage: storage, finish: finish,
		logger: cfg.Logger.With("component", "vfolder-jobs"), inFlight: map[uuid.UUID]bool{}}, nil
}

// Run resumes the unfinished jobs, then follows the log until ctx ends;
// it returns nil then, once the running jobs have stopped. It returns an
// error when the pending list cannot be read or the log not followed.
func (m *Manager) Run(ctx context.Context) error {
	ids, pos, err := m.pending.PendingJobs(ctx)
	if err != nil {
		return stopped(ctx, fmt.Errorf("vfolderjobs: pending jobs: %w", err))
	}
	sub, err := m.log.Subscribe(ctx, pos)
	if err != nil {
		return stopped(ctx, fmt.Errorf("vfolderjobs: subscribe: %w", err))
	}
	defer sub.Close()
	m.logger.Info("vfolder jobs starting", "from", pos, "resumed", len(ids), "workers", m.cfg.Workers)

	jobs := make(chan uuid.UUID, 1024)
	var wg sync.WaitGroup
	for range m.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				m.run(ctx, id)
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	queue := func(id uuid.UUID) bool {
		if !m.claim(id) {
			return true
		}
		select {
		case jobs <- id:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, id := range ids {
		if !queue(id) {
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-sub.Messages():
			if !ok {
				return stopped(ctx, fmt.Errorf("vfolderjobs: subscription ended: %w", sub.Err()))
			}
			if msg.CaughtUp {
				continue
			}
			if id, ok := jobOf(msg.Event); ok && !queue(id) {
				return nil
			}
		}
	}
}

// jobOf tells whether an event starts a job, and for which folder.
func jobOf(rec eventstore.RecordedEvent) (uuid.UUID, bool) {
	switch rec.Type {
	case domain.TypeVFolderCreated, domain.TypeVFolderDeleteStarted:
	default:
		return uuid.Nil, false
	}
	const prefix = "vfolder-"
	if len(rec.Stream) <= len(prefix) || rec.Stream[:len(prefix)] != prefix {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(rec.Stream[len(prefix):])
	if err != nil {
		return uuid.Nil, false
	}
	if rec.Type == domain.TypeVFolderCreated {
		ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
		if c, ok := ev.(domain.VFolderCreated); err != nil || !ok || c.Status != domain.VFolderCloning {
			return uuid.Nil, false
		}
	}
	return id, true
}

// claim marks a folder's job as queued; false when it is already.
func (m *Manager) claim(id uuid.UUID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inFlight[id] {
		return false
	}
	m.inFlight[id] = true
	return true
}

func (m *Manager) done(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inFlight, id)
}

// run does one folder's job, if it still has one.
func (m *Manager) run(ctx context.Context, id uuid.UUID) {
	defer m.done(id)
	if ctx.Err() != nil {
		return
	}
	f, err := m.fold(ctx, id)
	if err != nil {
		m.logger.Error("vfolder job skipped: the folder cannot be read", "folder_id", id, "error", err)
		return
	}
	start := time.Now()
	switch f.Status() {
	case domain.VFolderCloning:
		m.clone(ctx, f, start)
	case domain.VFolderDeleteOngoing:
		m.delete(ctx, f, start)
	}
}

func (m *Manager) clone(ctx context.Context, f *domain.VFolder, start time.Time) {
	srcHost, err := m.hostOf(ctx, f.CloneOf())
	if err == nil {
		err = m.storage.CloneFolder(ctx, srcHost, f.CloneOf(), f.Host(), f.ID())
	}
	if ctx.Err() != nil {
		return // stopped: resumed at the next start
	}
	msg := ""
	if err != nil {
		msg = publicMessage(err)
		m.logger.Warn("vfolder clone failed", "folder_id", f.ID(), "source", f.CloneOf(), "error", err)
	}
	_, ferr := m.finish.Clone.Handle(ctx, m.metadata(f), commands.FinishVFolderClone{FolderID: f.ID(), OK: err == nil, Message: msg})
	m.logDone("clone", f, start, err, ferr)
}

func (m *Manager) delete(ctx context.Context, f *domain.VFolder, start time.Time) {
	err := m.storage.DeleteFolder(ctx, f.Host(), f.ID())
	if ctx.Err() != nil {
		return
	}
	msg := ""
	if err != nil {
		msg = publicMessage(err)
		m.logger.Warn("vfolder delete failed", "folder_id", f.ID(), "error", err)
	}
	_, ferr := m.finish.Delete.Handle(ctx, m.metadata(f), commands.FinishVFolderDelete{FolderID: f.ID(), OK: err == nil, Message: msg})
	m.logDone("delete", f, start, err, ferr)
}

func (m *Manager) logDone(what string, f *domain.VFolder, start time.Time, err, ferr error) {
	if ferr != nil {
		m.logger.Error("vfolder job done but not recorded; it runs again at the next start", "job", what, "folder_id", f.ID(), "error", ferr)
		return
	}
	m.logger.Info("vfolder job done", "job", what, "folder_id", f.ID(), "ok", err == nil, "took", time.Since(start))
}

// hostOf is the host of a clone's source.
func (m *Manager) hostOf(ctx context.Context, id uuid.UUID) (string, error) {
	src, err := m.fold(ctx, id)
	if err != nil {
		return "", err
	}
	if !src.Exists() {
		return "", domain.Errorf("vfolder.clone", domain.KindNotFound, "the source folder is gone")
	}
	return src.Host(), nil
}

// fold reads and folds a folder's stream.
func (m *Manager) fold(ctx context.Context, id uuid.UUID) (*domain.VFolder, error) {
	recs, err := m.log.ReadStream(ctx, domain.VFolderStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		return nil, err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return nil, err
	}
	return domain.RehydrateVFolder(events)
}

// metadata of the finishing commands: caused by the folder's job.
func (m *Manager) metadata(f *domain.VFolder) commands.Metadata {
	return commands.Metadata{Actor: "vfolder-jobs", RequestID: "vfolder-job-" + f.ID().String()}
}

// publicMessage is what a user may read of a failure: the domain error's
// message for known kinds, a generic one for internal failures (which may
// name host directories).
func publicMessage(err error) string {
	if domain.KindOf(err) == domain.KindInternal {
		return "storage failure; see the server log"
	}
	return err.Error()
}

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
