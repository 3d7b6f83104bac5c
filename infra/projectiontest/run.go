package projectiontest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/projections"
)

// Timeout bounds every wait of the tests.
const Timeout = 60 * time.Second

// Running is a projector running in the background.
type Running struct {
	*projections.Projector
	cancel context.CancelFunc
	done   chan error
}

// Start runs a projector of p over db and store until Stop or the end of
// the test; at the end, Run must have returned nil.
func Start(t testing.TB, db *projections.DB, b *Backend, p projections.Projection, opts projections.Options) *Running {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = Discard
	}
	pr, err := projections.NewProjector(db, b.Store, p, opts)
	if err != nil {
		t.Fatalf("NewProjector: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{Projector: pr, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- pr.Run(ctx) }()
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Errorf("projector %s: Run: %v", pr.Name(), err)
		}
	})
	return r
}

// Stop cancels the projector and returns what Run returned. Calling it
// again returns nil.
func (r *Running) Stop() error {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(Timeout):
		return errors.New("projector did not stop")
	}
}

// Done delivers what Run returned, when it returns on its own.
func (r *Running) Done() <-chan error { return r.done }

// WaitFor waits (bounded by Timeout) until the projector reaches position.
func (r *Running) WaitFor(t testing.TB, position uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := r.Projector.WaitFor(ctx, position); err != nil {
		t.Fatalf("WaitFor(%d): %v", position, err)
	}
}
