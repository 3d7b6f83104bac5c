package projections_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

func TestProjectorAppliesHandledEventsOnce(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		w.agents(t, 3)
		w.noise(t, 5)
		w.sessions(t, "alice", 20)
		w.noise(t, 5) // the log ends with events nobody handles

		reg := prometheus.NewRegistry()
		metrics, err := projections.NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{BatchSize: 7, Metrics: metrics})
		r.WaitFor(t, w.Last())
		want := handledUpTo(t, b, w.Last())
		equalPositions(t, logged(t, b.DB), want)
		select {
		case <-r.CaughtUp():
		case <-time.After(projectiontest.Timeout):
			t.Fatal("CaughtUp not closed")
		}

		// The trailing noise moved the position without a write; stopping
		// writes the checkpoint it owes.
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		if got := checkpointOf(t, b.DB); got != w.Last() {
			t.Errorf("checkpoint after stop = %d, want %d", got, w.Last())
		}
		if got := metricValue(t, reg, "cairn_projection_events_applied_total", "event_log"); int(got) != len(want) {
			t.Errorf("events applied metric = %v, want %d", got, len(want))
		}
		if got := metricValue(t, reg, "cairn_projection_position", "event_log"); uint64(got) != w.Last() {
			t.Errorf("position metric = %v, want %d", got, w.Last())
		}
	})
}

// metricValue returns the value of the metric name of projection in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name, projection string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "projection" && l.GetValue() == projection {
					if c := m.GetCounter(); c != nil {
						return c.GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{projection=%q} not found", name, projection)
	return 0
}

func TestProjectorCancelMidBatchCommitsNothingOfIt(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		w.sessions(t, "alice", 45) // 60 handled events
		all := handledUpTo(t, b, w.Last())
		stopAt := all[37]

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cancelledIn bool
		log := &eventLog{hook: func(_ context.Context, ev projections.Event) error {
			if ev.Position == stopAt {
				cancelledIn = true
				cancel() // the crash happens in the middle of a batch
			}
			return nil
		}}
		p, err := projections.NewProjector(b.DB, b.Store, log, projections.Options{BatchSize: 10, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(ctx); err != nil {
			t.Fatalf("Run after cancel = %v, want nil (clean shutdown)", err)
		}
		if !cancelledIn {
			t.Fatal("the hook never ran on the chosen event")
		}
		cp := checkpointOf(t, b.DB)
		if cp >= stopAt {
			t.Fatalf("checkpoint %d includes the batch that was cancelled (event %d)", cp, stopAt)
		}
		// Exactly the events up to the checkpoint are in the log: the batch
		// in flight left nothing behind, and nothing before it is missing.
		var upToCheckpoint []uint64
		for _, pos := range all {
			if pos <= cp {
				upToCheckpoint = append(upToCheckpoint, pos)
			}
		}
		equalPositions(t, logged(t, b.DB), upToCheckpoint)
		if p.Position() > cp && p.Position() >= stopAt {
			t.Errorf("Position() = %d after the batch of %d was rolled back", p.Position(), stopAt)
		}

		// A restart resumes from the checkpoint: no gap, no duplicate (a
		// duplicate would fail the primary key and stop the projector).
		r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{BatchSize: 10})
		r.WaitFor(t, w.Last())
		equalPositions(t, logged(t, b.DB), all)
	})
}

func TestProjectorRestartsWhileWritersAppend(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		progress := make(chan uint64, 8)
		go func() {
			defer close(progress)
			for range 6 {
				w.sessions(t, "bob", 10)
				progress <- w.Last()
			}
		}()
		// Stop and restart the projector after each chunk while the writer
		// goes on; every run picks up where the previous one committed.
		for pos := range progress {
			r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{BatchSize: 5})
			r.WaitFor(t, pos)
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{BatchSize: 5})
		r.WaitFor(t, w.Last())
		equalPositions(t, logged(t, b.DB), handledUpTo(t, b, w.Last()))
	})
}

func TestWaitFor(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{})
		ctx := context.Background()
		if err := r.Projector.WaitFor(ctx, 0); err != nil {
			t.Fatalf("WaitFor(0) = %v", err)
		}

		w := newWriter(t, b)
		w.sessions(t, "carol", 1) // requested, then cancelled
		pos := w.Last()
		r.WaitFor(t, pos)
		// Read-your-writes: once WaitFor returned, the row is there.
		if got := logged(t, b.DB); len(got) != 2 || got[1] != pos {
			t.Fatalf("after WaitFor(%d) the log holds %v", pos, got)
		}

		// A position nobody wrote yet: bounded by the context.
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		err := r.Projector.WaitFor(short, pos+1000)
		if domain.KindOf(err) != domain.KindUnavailable || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitFor(beyond) = %v, want KindUnavailable wrapping DeadlineExceeded", err)
		}

		// A stopped projector answers at once.
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		long, cancel2 := context.WithTimeout(ctx, projectiontest.Timeout)
		defer cancel2()
		err = r.Projector.WaitFor(long, pos+1000)
		if !errors.Is(err, projections.ErrStopped) || domain.KindOf(err) != domain.KindUnavailable {
			t.Fatalf("WaitFor on a stopped projector = %v, want ErrStopped (KindUnavailable)", err)
		}
		if long.Err() != nil {
			t.Fatal("WaitFor on a stopped projector waited for its context")
		}
	})
}

func TestRunTwiceIsRefused(t *testing.T) {
	b := projectiontest.SQLite(t)
	r := projectiontest.Start(t, b.DB, b, &eventLog{}, projections.Options{})
	select {
	case <-r.CaughtUp():
	case <-time.After(projectiontest.Timeout):
		t.Fatal("not caught up")
	}
	if err := r.Run(context.Background()); !errors.Is(err, projections.ErrBusy) {
		t.Fatalf("second Run = %v, want ErrBusy", err)
	}
	if err := r.Rebuild(context.Background(), nil); !errors.Is(err, projections.ErrBusy) {
		t.Fatalf("Rebuild while running = %v, want ErrBusy", err)
	}
}

func checkpointOf(t testing.TB, db *projections.DB) uint64 {
	t.Helper()
	cp, err := projections.Checkpoint(context.Background(), db, "event_log")
	if err != nil {
		t.Fatal(err)
	}
	return cp
}
