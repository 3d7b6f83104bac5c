package sessions_test

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// The live projector, stopped and restarted mid-stream with small batches,
// and a rebuild from position 0 in large batches produce the same rows.
func TestRebuildEqualsLive(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 3})
		if _, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 64)}); err != nil {
			t.Fatal(err)
		}
		var last uint64
		for i := range 12 {
			res := e.request(t, projectiontest.SessionSpec("alice", "0.1", 1+i%3))
			gpu := []string{"GPU-0", "GPU-1"}[i%2]
			last = res.Position
			switch i % 4 {
			case 1:
				out, err := e.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: res.SessionID})
				if err != nil {
					t.Fatal(err)
				}
				last = out.Position
			case 2, 3:
				if _, err := e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
					SessionID: res.SessionID, Kernels: projectiontest.Place("node-1", res.KernelIDs, gpu, "0.1")}); err != nil {
					t.Fatal(err)
				}
				for _, k := range res.KernelIDs {
					e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: k, AgentID: "node-1",
						Phase: domain.PhaseRunning, ContainerID: "c-" + k.String()})
				}
				last = e.used(t, res.SessionID, projectiontest.T0.Add(time.Duration(i)*time.Minute), audit.Success)
				if i%4 == 3 {
					out, err := e.h.TerminateSession.Handle(ctx, projectiontest.MD, commands.TerminateSession{SessionID: res.SessionID})
					if err != nil {
						t.Fatal(err)
					}
					last = out.Position
					for _, k := range res.KernelIDs {
						last = e.report(t, commands.ReportKernelStatus{SessionID: res.SessionID, KernelID: k, AgentID: "node-1", Phase: domain.PhaseRemoved})
					}
				}
			}
			if i == 6 {
				// Restart mid-stream.
				if err := e.r.Stop(); err != nil {
					t.Fatal(err)
				}
				e.r = projectiontest.Start(t, b.DB, b, e.rm, projections.Options{BatchSize: 2})
			}
		}
		e.r.WaitFor(t, last)
		if err := e.r.Stop(); err != nil {
			t.Fatal(err)
		}
		live := dumpAll(t, b.DB)
		if len(live) == 0 {
			t.Fatal("nothing projected")
		}

		p, err := projections.NewProjector(b.DB, b.Store, sessions.New(b.DB), projections.Options{BatchSize: 500, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var calls int
		var lastDone, lastTotal uint64
		if err := p.Rebuild(ctx, func(done, total uint64) {
			if done < lastDone || done > total {
				t.Errorf("progress %d/%d after %d", done, total, lastDone)
			}
			calls++
			lastDone, lastTotal = done, total
		}); err != nil {
			t.Fatal(err)
		}
		if calls < 2 || lastDone != lastTotal || lastDone == 0 {
			t.Errorf("progress called %d times, ending at %d/%d", calls, lastDone, lastTotal)
		}
		if p.Position() < last {
			t.Errorf("rebuild stopped at %d, before %d", p.Position(), last)
		}
		if diff := projectiontest.DiffRows(live, dumpAll(t, b.DB)); diff != "" {
			t.Fatalf("rebuild differs from the live rows:\n%s", diff)
		}
	})
}
