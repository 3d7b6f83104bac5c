package maintenance

import (
	"context"
	"errors"
	"sync"

	"github.com/cairnhq/cairn/projections"
)

// ErrHeld is returned by Hold while another holder holds the projector.
var ErrHeld = errors.New("maintenance: the projector is already held")

// Runner runs a live projector and can hold it (stop its Run and keep it
// stopped) while its read model's rows are swapped.
type Runner struct {
	p *projections.Projector

	mu sync.Mutex
	// cancel stops the Run in progress; stopped is closed when it returned.
	cancel  context.CancelFunc
	stopped chan struct{}
	// held is non-nil while the projector is held, closed on release.
	held chan struct{}
}

// NewRunner returns a Runner of p.
func NewRunner(p *projections.Projector) *Runner { return &Runner{p: p} }

// Projector is the projector run.
func (r *Runner) Projector() *projections.Projector { return r.p }

// Run runs the projector until ctx ends or it stops on its own (its error
// is returned then), restarting it after every Hold is released.
func (r *Runner) Run(ctx context.Context) error {
	for {
		r.mu.Lock()
		for r.held != nil {
			h := r.held
			r.mu.Unlock()
			select {
			case <-h:
			case <-ctx.Done():
				return nil
			}
			r.mu.Lock()
		}
		if ctx.Err() != nil {
			r.mu.Unlock()
			return nil
		}
		runCtx, cancel := context.WithCancel(ctx)
		stopped := make(chan struct{})
		r.cancel, r.stopped = cancel, stopped
		r.mu.Unlock()

		err := r.p.Run(runCtx)
		onItsOwn := runCtx.Err() == nil
		cancel()
		close(stopped)
		if ctx.Err() != nil || onItsOwn {
			return err
		}
	}
}

// Hold stops the projector's Run and keeps it stopped until release is
// called (once; later calls do nothing). It returns once Run has returned.
func (r *Runner) Hold(ctx context.Context) (release func(), err error) {
	r.mu.Lock()
	if r.held != nil {
		r.mu.Unlock()
		return nil, ErrHeld
	}
	h := make(chan struct{})
	r.held = h
	cancel, stopped := r.cancel, r.stopped
	r.mu.Unlock()
	release = sync.OnceFunc(func() {
		r.mu.Lock()
		r.held = nil
		r.mu.Unlock()
		close(h)
	})
	if cancel != nil {
		cancel()
		select {
		case <-stopped:
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}
