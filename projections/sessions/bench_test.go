package sessions_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// BenchmarkRebuild replays a log of requested and cancelled sessions into
// the sessions read model: go test -run '^$' -bench Rebuild ./projections/sessions/
// (the PostgreSQL case under scripts/with-postgres.sh).
func BenchmarkRebuild(b *testing.B) {
	benchRebuild(b, "events/s", func(b *testing.B, be *projectiontest.Backend) int { return fill(b, be, 3000) })
}

// BenchmarkRebuildPlaced replays a scheduling round's log into the
// sessions read model: sessions requested, then placed in one batch
// (commands.ScheduleSessions, as the scheduler writes them; a third of
// them with 2 kernels, each kernel with a GPU share), on 120 agents:
// go test -run '^$' -bench RebuildPlaced ./projections/sessions/
func BenchmarkRebuildPlaced(b *testing.B) {
	benchRebuild(b, "sessions/s", func(b *testing.B, be *projectiontest.Backend) int {
		h := projectiontest.Handlers(b, be)
		const agents, count = 120, 3000
		for i := range agents {
			if _, err := h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec(fmt.Sprintf("node-%d", i), 4096)}); err != nil {
				b.Fatal(err)
			}
		}
		var cmd commands.ScheduleSessions
		for i := range count {
			res, err := h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec(fmt.Sprintf("u%d", i%50), "0.01", 1+i%3/2)})
			if err != nil {
				b.Fatal(err)
			}
			cmd.Placements = append(cmd.Placements, commands.SessionPlacement{SessionID: res.SessionID,
				Kernels: projectiontest.Place(fmt.Sprintf("node-%d", i%agents), res.KernelIDs, fmt.Sprintf("GPU-%d", i%2), "0.01")})
		}
		if out, err := h.ScheduleSessions.Handle(ctx, projectiontest.MD, cmd); err != nil || len(out.Scheduled) != count {
			b.Fatalf("scheduled %d of %d: %v", len(out.Scheduled), count, err)
		}
		return count
	})
}

// benchRebuild runs a rebuild of the sessions read model over the log
// setup writes, on each backend, and reports setup's count per second as
// unit.
func benchRebuild(b *testing.B, unit string, setup func(*testing.B, *projectiontest.Backend) int) {
	for _, open := range []struct {
		name string
		open func(testing.TB) *projectiontest.Backend
	}{{"sqlite", projectiontest.SQLite}, {"postgres", projectiontest.Postgres}} {
		b.Run(open.name, func(b *testing.B) {
			be := open.open(b)
			n := setup(b, be)
			p, err := projections.NewProjector(be.DB, be.Store, sessions.New(be.DB), projections.Options{Logger: projectiontest.Discard})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := p.Rebuild(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), unit)
		})
	}
}

// fill requests n sessions from 16 writers and cancels every other one; it
// returns the number of events written.
func fill(b *testing.B, be *projectiontest.Backend, n int) int {
	h := projectiontest.Handlers(b, be)
	var wg sync.WaitGroup
	const writers = 16
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n / writers {
				res, err := h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec(fmt.Sprintf("u%d", w), "", 1)})
				if err != nil {
					b.Error(err)
					return
				}
				if i%2 == 0 {
					if _, err := h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: res.SessionID}); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return n/writers*writers + (n/writers+1)/2*writers
}
