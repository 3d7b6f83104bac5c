package projections_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

// A full disk fails a batch many more times than MaxAttempts: the
// projector pauses (Paused says why) instead of stopping, and applies the
// batch once the disk takes writes again.
func TestFullDiskPausesTheProjectorUntilItTakesWrites(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		w.sessions(t, "alice", 3)
		var full atomic.Bool
		full.Store(true)
		var failures atomic.Int32
		log := &eventLog{hook: func(context.Context, projections.Event) error {
			if full.Load() {
				failures.Add(1)
				return eventstore.StorageFull("test", errors.New("no room left"))
			}
			return nil
		}}
		p, err := projections.NewProjector(b.DB, b.Store, log, projections.Options{
			MaxAttempts: 2, RetryBackoff: time.Millisecond, MaxRetryBackoff: 5 * time.Millisecond, Logger: projectiontest.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v after a clean stop", err)
			}
		}()

		await.Until(t, 2*projectiontest.Timeout, "ten failures and the projector paused", func() bool {
			select {
			case err := <-done:
				t.Fatalf("Run returned %v while the disk was full; want it paused", err)
			default:
			}
			return failures.Load() >= 10 && p.Paused() != nil
		})
		if !errors.Is(p.Paused(), eventstore.ErrStorageFull) {
			t.Errorf("Paused = %v, want ErrStorageFull", p.Paused())
		}

		full.Store(false)
		wctx, wcancel := context.WithTimeout(context.Background(), projectiontest.Timeout)
		defer wcancel()
		if err := p.WaitFor(wctx, w.Last()); err != nil {
			t.Fatalf("WaitFor after the disk took writes again: %v", err)
		}
		// Paused clears when the retry returns, just after the commit
		// that WaitFor saw.
		await.Until(t, projectiontest.Timeout, "Paused to clear after the batch committed", func() bool { return p.Paused() == nil })
		if cp := checkpointOf(t, b.DB); cp != w.Last() {
			t.Errorf("checkpoint = %d, want %d", cp, w.Last())
		}
	})
}
