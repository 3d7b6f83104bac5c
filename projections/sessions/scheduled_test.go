package sessions_test

import (
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// TestManyPlacementsInOneBatch: a scheduling round's placements, applied
// in one batch (many rows per statement) with later events of some of the
// same sessions in that batch, give the rows of the aggregates and exactly
// the rows a rebuild one event per batch gives.
func TestManyPlacementsInOneBatch(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		h := projectiontest.Handlers(t, b)
		const agents, count = 8, 150
		for i := range agents {
			if _, err := h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec(fmt.Sprintf("node-%d", i), 256)}); err != nil {
				t.Fatal(err)
			}
		}
		var requested []commands.RequestSessionResult
		var cmd commands.ScheduleSessions
		for i := range count {
			res, err := h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec("alice", "", 1+i%3)})
			if err != nil {
				t.Fatal(err)
			}
			requested = append(requested, res)
			cmd.Placements = append(cmd.Placements, commands.SessionPlacement{SessionID: res.SessionID,
				Kernels: projectiontest.Place(fmt.Sprintf("node-%d", i%agents), res.KernelIDs, "", "")})
		}
		out, err := h.ScheduleSessions.Handle(ctx, projectiontest.MD, cmd)
		if err != nil || len(out.Scheduled) != count {
			t.Fatalf("scheduled %d of %d: %v %v", len(out.Scheduled), count, err, out.Refused)
		}
		last := out.Position
		// Later events of a few of them, in the same batch as their placement.
		for i, r := range requested[:10] {
			rep, err := h.ReportKernelStatus.Handle(ctx, projectiontest.MD, commands.ReportKernelStatus{SessionID: r.SessionID, KernelID: r.KernelIDs[0],
				AgentID: cmd.Placements[i].Kernels[0].AgentID, Phase: domain.PhasePreparing})
			if err != nil {
				t.Fatal(err)
			}
			last = max(last, rep.Position)
		}

		rm := sessions.New(b.DB)
		if err := projections.Setup(ctx, b.DB, rm); err != nil {
			t.Fatal(err)
		}
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 10000})
		r.WaitFor(t, last)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		e := &env{b: b, h: h, rm: rm}
		for _, req := range requested {
			got, err := rm.GetSession(ctx, req.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			checkMirrors(t, got, e.aggregate(t, req.SessionID))
		}
		live := dumpAll(t, b.DB)

		p, err := projections.NewProjector(b.DB, b.Store, sessions.New(b.DB), projections.Options{BatchSize: 1, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(live, dumpAll(t, b.DB)); diff != "" {
			t.Fatalf("one event per batch differs from one batch:\n%s", diff)
		}
	})
}
