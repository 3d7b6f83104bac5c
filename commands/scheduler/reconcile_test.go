package scheduler_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// allocate records an allocation on an agent's stream without scheduling
// its session: what a crash between ScheduleSession's two steps leaves.
func (e *env) allocate(agent string, session, kernel uuid.UUID, slots domain.Slots, devices ...domain.DeviceShare) {
	e.T.Helper()
	ev, err := eventstore.NewEvent(domain.TypeAgentAllocated, domain.AgentAllocated{
		KernelID: kernel, SessionID: session, Slots: slots, Devices: devices, At: t0,
	}, e.MD.Stored())
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := e.Store.Append(bg, domain.AgentStream(agent).String(), eventstore.Any, ev); err != nil {
		e.T.Fatal(err)
	}
}

func TestReconcileRepairsHalfMadePlacements(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 16, 64, 2))
	slots := with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5"))

	// Allocated, never scheduled: completed as it stands.
	whole := e.request(slots, 1, "")
	e.allocate("a1", whole.SessionID, whole.KernelIDs[0], slots, share("a1-GPU-1", "0.5"))
	// Allocated, then cancelled before it was scheduled: released.
	cancelled := e.request(slots, 1, "")
	e.allocate("a1", cancelled.SessionID, cancelled.KernelIDs[0], slots, share("a1-GPU-0", "0.5"))
	if _, err := e.Handlers.CancelPendingSession.Handle(bg, e.MD, commands.CancelPendingSession{SessionID: cancelled.SessionID}); err != nil {
		t.Fatal(err)
	}
	// One kernel of two allocated: released, then placed afresh.
	half := e.request(cpuMem(1, 1), 2, "")
	e.allocate("a1", half.SessionID, half.KernelIDs[0], cpuMem(1, 1))
	// An allocation of a session that does not exist: released.
	ghost := uuid.MustParse("0195a0c0-0000-7000-8000-00000000dead")
	e.allocate("a1", ghost, ghost, cpuMem(1, 1))

	e.start(scheduler.Config{})
	s := e.AwaitStatus(whole.SessionID, domain.StatusScheduled)
	if p := s.Kernels()[0].Placement(); p.AgentID != "a1" || len(p.Devices) != 1 || p.Devices[0] != share("a1-GPU-1", "0.5") {
		t.Fatalf("placement %+v, want the allocation's", p)
	}
	e.AwaitStatus(half.SessionID, domain.StatusScheduled)
	e.Await("the stray allocations are released", func() bool {
		a := e.Agent("a1")
		_, c := a.Allocation(cancelled.KernelIDs[0])
		_, g := a.Allocation(ghost)
		return !c && !g
	})
	a := e.Agent("a1")
	for _, k := range append(whole.KernelIDs, half.KernelIDs...) {
		if _, ok := a.Allocation(k); !ok {
			t.Fatalf("kernel %s holds nothing", k)
		}
	}
	if n := len(a.Allocations()); n != 3 {
		t.Fatalf("%d allocations, want 3", n)
	}
	// The whole one kept its allocation: nothing of it was released.
	for _, ev := range e.Decoded(domain.AgentStream("a1").String()) {
		if r, ok := ev.Event.(domain.AgentReleased); ok {
			if r.KernelID == whole.KernelIDs[0] || r.Reason != domain.ReasonScheduleAborted {
				t.Fatalf("release %+v", r)
			}
		}
	}
	e.CheckCapacity("a1")
	e.checkPlacements([]uuid.UUID{whole.SessionID, cancelled.SessionID, half.SessionID})
}
