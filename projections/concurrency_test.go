package projections_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

// Two projectors of one projection (two server replicas, each with its own
// connection) and a rebuild from a third one: the checkpoint row keeps
// every event applied exactly once (the event log's primary key would stop
// a projector on any duplicate).
func TestConcurrentProjectorsAndRebuildApplyEachEventOnce(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		write := func(round int) {
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.sessions(t, fmt.Sprintf("user-%d-%d", round, g), 8)
				}()
			}
			wg.Wait()
		}

		a := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{BatchSize: 4})
		other := projectiontest.Start(t, b.OpenDB(t), b, &eventLog{}, projections.Options{BatchSize: 3})
		write(0)
		a.WaitFor(t, w.Last())
		other.WaitFor(t, w.Last())
		equalPositions(t, logged(t, b.DB), handledUpTo(t, b, w.Last()))

		// A rebuild elsewhere while both keep running and writers append.
		rebuilder, err := projections.NewProjector(b.OpenDB(t), b.Store, &eventLog{}, projections.Options{BatchSize: 6, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			write(1)
		}()
		if err := rebuilder.Rebuild(context.Background(), nil); err != nil {
			t.Fatalf("Rebuild: %v", err)
		}
		<-done
		// One more event lets the running projectors notice the reset
		// if they have not yet.
		write(2)
		a.WaitFor(t, w.Last())
		other.WaitFor(t, w.Last())
		equalPositions(t, logged(t, b.DB), handledUpTo(t, b, w.Last()))
	})
}
