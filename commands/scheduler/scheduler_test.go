package scheduler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

var bg = context.Background()

func TestNewRefusesABadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := scheduler.New(scheduler.Config{Interval: -1, PendingTimeout: -1, StartTimeout: -5}, nil, scheduler.Commands{}); err == nil ||
		!strings.Contains(err.Error(), "interval") || !strings.Contains(err.Error(), "pending timeout") || !strings.Contains(err.Error(), "start timeout") {
		t.Fatalf("err = %v, want every problem", err)
	}
	if _, err := scheduler.New(scheduler.Config{StartTimeout: scheduler.Never}, e.Store, scheduler.CommandsOf(e.Handlers)); err != nil {
		t.Fatal(err)
	}
	// The scheduler names every command it lacks.
	cmds := scheduler.CommandsOf(e.Handlers)
	cmds.ReleaseAllocation, cmds.ScheduleSessions = nil, nil
	if _, err := scheduler.New(scheduler.Config{}, e.Store, cmds); err == nil ||
		!strings.Contains(err.Error(), "no ReleaseAllocation handler") || !strings.Contains(err.Error(), "no ScheduleSessions handler") {
		t.Fatalf("err = %v, want both missing commands named", err)
	}
}

// TestSchedulerNeverOversubscribes runs the real loop over random shapes:
// sessions of every kind arrive, some are placed, some wait, some end and
// free capacity for the others. At every quiet point, every agent's
// allocations fit in its capacity and no GPU share is given twice, and
// every scheduled session holds exactly the allocations it was placed
// with.
func TestSchedulerNeverOversubscribes(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 11))
			e := newEnv(t)
			var agents []string
			for i := range 3 {
				id := fmt.Sprintf("a%d", i)
				agents = append(agents, id)
				e.RegisterAgent(agentSpec(id, int64(4+rng.IntN(12)), int64(16+rng.IntN(64)), rng.IntN(4)))
			}
			e.start(scheduler.Config{})

			var sessions []uuid.UUID
			for range 24 {
				slots := cpuMem(int64(1+rng.IntN(6)), int64(1+rng.IntN(24)))
				switch rng.IntN(3) {
				case 1:
					slots[domain.SlotCUDADevice] = domain.Units(int64(1 + rng.IntN(2)))
				case 2:
					slots[domain.SlotCUDAShares] = domain.Quantity(int64(1+rng.IntN(150)) * 10)
				}
				mode := domain.ClusterSingleNode
				if rng.IntN(3) == 0 {
					mode = domain.ClusterMultiNode
				}
				sessions = append(sessions, e.request(slots, 1+rng.IntN(2), mode).SessionID)
			}
			e.awaitSettled(sessions)
			e.CheckCapacity(agents...)
			e.checkPlacements(sessions)

			// End the running half; the scheduler fills the freed capacity.
			for _, id := range sessions[:len(sessions)/2] {
				e.end(id)
			}
			e.awaitSettled(sessions)
			e.CheckCapacity(agents...)
			e.checkPlacements(sessions)
		})
	}
}

// awaitSettled waits until no session is PENDING without a recorded
// reason: each has been placed or found no place.
func (e *env) awaitSettled(sessions []uuid.UUID) {
	e.T.Helper()
	e.Await("every session is placed or waits with a reason", func() bool {
		for _, id := range sessions {
			s := e.Session(id)
			if s.Status() == domain.StatusPending && s.StatusReason() == "" {
				return false
			}
		}
		return true
	})
}

// checkPlacements: a scheduled session's kernels hold exactly their
// placement on their agents; a waiting one holds nothing.
func (e *env) checkPlacements(sessions []uuid.UUID) {
	e.T.Helper()
	for _, id := range sessions {
		s := e.Session(id)
		if n := e.Count(domain.SessionStream(id).String(), domain.TypeSessionScheduled); n > 1 {
			e.T.Fatalf("session %s scheduled %d times", id, n)
		}
		for _, k := range s.Kernels() {
			if !s.Status().HoldsResources() {
				continue
			}
			al, ok := e.Agent(k.AgentID()).Allocation(k.ID())
			if !ok || al.SessionID != id || !slices.Equal(al.Devices, k.Devices()) {
				e.T.Fatalf("session %s kernel %s: allocation %+v %v, placed %+v", id, k.ID(), al, ok, k.Placement())
			}
		}
	}
}

// end terminates a session and, as its agent would, reports its kernels
// removed.
func (e *env) end(id uuid.UUID) {
	e.T.Helper()
	if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: id}); err != nil {
		e.T.Fatal(err)
	}
	s := e.Session(id)
	if s.Status() != domain.StatusTerminating {
		return // it was pending: cancelled
	}
	for _, k := range s.Kernels() {
		_, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
			SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseRemoved,
		})
		if err != nil {
			e.T.Fatal(err)
		}
	}
}

func TestAnImpossibleRequestWaitsWithItsReasonsAndCanBeCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{})

	huge := e.request(cpuMem(1, 1024), 1, "")
	e.Await("the huge session has a reason", func() bool { return e.Session(huge.SessionID).StatusReason() != "" })
	s := e.Session(huge.SessionID)
	if s.Status() != domain.StatusPending || s.StatusReason() != domain.ReasonNoAvailableInstances ||
		!slices.Equal(s.PendingDetails(), []string{"mem: requested 1T exceeds the capacity of every agent"}) {
		t.Fatalf("%s %s %q", s.Status(), s.StatusReason(), s.PendingDetails())
	}

	// Later rounds (woken by another session, and by the ticks meanwhile)
	// do not record the same reasons again.
	small := e.request(cpuMem(1, 1), 1, "")
	e.AwaitStatus(small.SessionID, domain.StatusScheduled)
	if n := e.Count(domain.SessionStream(huge.SessionID).String(), domain.TypeSessionPendingUpdated); n != 1 {
		t.Fatalf("%d pending-updated events, want 1", n)
	}

	if _, err := e.Handlers.CancelPendingSession.Handle(bg, e.MD, commands.CancelPendingSession{SessionID: huge.SessionID}); err != nil {
		t.Fatal(err)
	}
	if s := e.Session(huge.SessionID); s.Status() != domain.StatusCancelled || s.StatusReason() != domain.ReasonUserRequested {
		t.Fatalf("%s %s", s.Status(), s.StatusReason())
	}
	e.CheckCapacity("a1")
}

func TestPendingTimeoutCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{PendingTimeout: time.Minute, StartTimeout: scheduler.Never, TerminatingTimeout: scheduler.Never})

	waiting := e.request(cpuMem(64, 1), 1, "")
	e.Await("the session has a reason", func() bool { return e.Session(waiting.SessionID).StatusReason() != "" })
	e.Clock.Advance(2 * time.Minute)
	s := e.AwaitStatus(waiting.SessionID, domain.StatusCancelled)
	if s.StatusReason() != domain.ReasonPendingTimeout {
		t.Fatalf("reason %s", s.StatusReason())
	}
}

func TestTerminatingDeadlineForcesTermination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 1))
	e.start(scheduler.Config{TerminatingTimeout: 10 * time.Minute, StartTimeout: scheduler.Never})

	res := e.request(with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1, "")
	e.AwaitStatus(res.SessionID, domain.StatusScheduled)
	if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: res.SessionID}); err != nil {
		t.Fatal(err)
	}
	// The agent never answers.
	e.Clock.Advance(11 * time.Minute)
	s := e.AwaitStatus(res.SessionID, domain.StatusTerminated)
	if s.StatusReason() != domain.ReasonForceTerminated {
		t.Fatalf("reason %s", s.StatusReason())
	}
	e.Await("the allocation is released", func() bool { return e.Agent("a1").Occupied().IsZero() })
}

func TestStartDeadlineFailsAStuckSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 8, 64, 0))
	e.start(scheduler.Config{StartTimeout: 5 * time.Minute, TerminatingTimeout: scheduler.Never})

	res := e.request(cpuMem(1, 1), 1, "")
	s := e.AwaitStatus(res.SessionID, domain.StatusScheduled)
	k := s.Kernels()[0]
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: res.SessionID, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhasePreparing,
	}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(6 * time.Minute)
	s = e.AwaitStatus(res.SessionID, domain.StatusError)
	if s.StatusReason() != domain.ReasonFailedToStart {
		t.Fatalf("reason %s", s.StatusReason())
	}
	e.Await("the allocation is released", func() bool { return e.Agent("a1").Occupied().IsZero() })
}

// TestRestartRebuildsStateAndDoesNotDoublePlace stops the scheduler after
// it placed sessions and starts another: it must rebuild occupancy from
// the log, place new sessions in what is left, and never place a session
// twice.
func TestRestartRebuildsStateAndDoesNotDoublePlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 2))
	stop := e.start(scheduler.Config{})
	var first []uuid.UUID
	for range 3 {
		first = append(first, e.request(with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1, "").SessionID)
	}
	for _, id := range first {
		e.AwaitStatus(id, domain.StatusScheduled)
	}
	stop()

	e.start(scheduler.Config{})
	fits := e.request(with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1, "")
	tooMany := e.request(with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1, "") // 5 cpus asked of 4
	e.AwaitStatus(fits.SessionID, domain.StatusScheduled)
	e.Await("the fifth session waits", func() bool { return e.Session(tooMany.SessionID).StatusReason() != "" })

	all := append(first, fits.SessionID, tooMany.SessionID)
	e.CheckCapacity("a1")
	e.checkPlacements(all)
	a := e.Agent("a1")
	if len(a.Allocations()) != 4 || e.Count(domain.AgentStream("a1").String(), domain.TypeAgentReleased) != 0 {
		t.Fatalf("%d allocations, %d releases", len(a.Allocations()), e.Count(domain.AgentStream("a1").String(), domain.TypeAgentReleased))
	}
	if s := e.Session(tooMany.SessionID); s.Status() != domain.StatusPending || !slices.Contains(s.PendingDetails(), "cpu: requested 1, no agent has that much free") {
		t.Fatalf("%s %q", s.Status(), s.PendingDetails())
	}
}
