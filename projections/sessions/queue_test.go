package sessions_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

// TestPending: the queue query returns the PENDING sessions in request
// order with what placement checks besides slots (starts_at, the
// architecture, the dependencies), and Outcomes how the dependencies
// stand.
func TestPending(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		first := e.request(t, projectiontest.SessionSpec("alice", "", 1))
		spec := projectiontest.SessionSpec("bob", "0.5", 2)
		startsAt := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		spec.StartsAt, spec.Architecture, spec.Dependencies = startsAt, "aarch64", []uuid.UUID{first.SessionID}
		second := e.request(t, spec)
		out, err := e.h.TerminateSession.Handle(ctx, projectiontest.MD, commands.TerminateSession{SessionID: first.SessionID})
		if err != nil {
			t.Fatal(err)
		}
		third := e.request(t, projectiontest.SessionSpec("carol", "", 1))
		e.r.WaitFor(t, max(out.Position, third.Position))

		q, err := e.rm.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) != 2 || q[0].ID != second.SessionID || q[1].ID != third.SessionID {
			t.Fatalf("pending %+v, want the second and third sessions in order", q)
		}
		got := q[0]
		if !got.StartsAt.Equal(startsAt) || got.Architecture != "aarch64" || !slices.Equal(got.Dependencies, []uuid.UUID{first.SessionID}) ||
			len(got.Kernels) != 2 || got.Seq == 0 || got.Seq >= q[1].Seq {
			t.Fatalf("queued %+v", got)
		}
		if !q[1].StartsAt.IsZero() || q[1].Architecture != "" || len(q[1].Dependencies) != 0 {
			t.Fatalf("queued without options %+v", q[1])
		}
		missing := uuid.New()
		outcomes, err := e.rm.Outcomes(ctx, []uuid.UUID{first.SessionID, third.SessionID, missing})
		if err != nil {
			t.Fatal(err)
		}
		if len(outcomes) != 2 || outcomes[first.SessionID].Status != domain.StatusCancelled || outcomes[third.SessionID].Status != domain.StatusPending {
			t.Fatalf("outcomes %+v", outcomes)
		}
	})
}
