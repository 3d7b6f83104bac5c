package scheduler_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/infra/managertest"
	"github.com/google/uuid"
)

// rounds records the scheduler's round reports, in order, as they are
// made.
type rounds struct {
	mu   sync.Mutex
	all  []scheduler.RoundReport
	made chan struct{}
}

func newRounds() *rounds { return &rounds{made: make(chan struct{}, 1)} }

func (r *rounds) add(rep scheduler.RoundReport) {
	r.mu.Lock()
	r.all = append(r.all, rep)
	r.mu.Unlock()
	select {
	case r.made <- struct{}{}:
	default:
	}
}

func (r *rounds) list() []scheduler.RoundReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

// await waits until the reports made so far satisfy cond, woken by each
// new report (the rounds report after their writes, so the store's events
// cannot tell when a report is there).
func (r *rounds) await(t *testing.T, what string, cond func([]scheduler.RoundReport) bool) {
	t.Helper()
	timeout := time.NewTimer(managertest.WaitTimeout)
	defer timeout.Stop()
	for !cond(r.list()) {
		select {
		case <-r.made:
		case <-timeout.C:
			t.Fatalf("timed out waiting until %s: %+v", what, r.list())
		}
	}
}

// TestAnArrivalCostsItsOwnRound: with a queue of sessions that cannot be
// placed and no tick to come, a new session that fits is placed by a
// round that decides on it alone, not on the whole queue.
func TestAnArrivalCostsItsOwnRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 0))
	seen := newRounds()
	lifo := placement.ResourceGroup{Order: placement.OrderLIFO, Selector: placement.SelectorDispersed}
	e.start(scheduler.Config{Interval: time.Hour, Queue: lifo, OnRound: seen.add})

	var queue []uuid.UUID
	for range 30 {
		queue = append(queue, e.request(cpuMem(8, 1), 1, "").SessionID) // more than any agent has
	}
	e.Await("the queue waits with its reasons", func() bool {
		for _, id := range queue {
			if e.Session(id).StatusReason() == "" {
				return false
			}
		}
		return true
	})
	fits := e.request(cpuMem(1, 1), 1, "")
	e.AwaitStatus(fits.SessionID, domain.StatusScheduled)
	seen.await(t, "the round that placed it is reported", func(all []scheduler.RoundReport) bool {
		return len(all) > 0 && all[len(all)-1].Placed == 1
	})
	all := seen.list()
	if last := all[len(all)-1]; last.Sessions != 1 {
		t.Fatalf("the round that placed the arrival decided on %d sessions, want 1 (rounds: %+v)", last.Sessions, all)
	}
	for _, id := range queue {
		if s := e.Session(id); s.Status() != domain.StatusPending {
			t.Fatalf("session %s: %s", id, s.Status())
		}
	}
}

// TestFreedCapacityGoesToTheHeadOfTheQueue: rounds skipped while only
// new sessions arrive never starve the queue. The cluster is full, a
// large session waits at the head, smaller ones arrive behind it; when
// capacity frees up (and no tick comes), the head is placed, not the
// smaller ones that arrived later.
func TestFreedCapacityGoesToTheHeadOfTheQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 0))
	e.start(scheduler.Config{Interval: time.Hour})

	running := e.request(cpuMem(4, 1), 1, "")
	e.AwaitStatus(running.SessionID, domain.StatusScheduled)
	head := e.request(cpuMem(4, 1), 1, "")
	e.Await("the head waits with a reason", func() bool { return e.Session(head.SessionID).StatusReason() != "" })
	var behind []uuid.UUID
	for range 6 {
		behind = append(behind, e.request(cpuMem(1, 1), 1, "").SessionID)
	}
	e.Await("the first session behind it has been tried", func() bool { return e.Session(behind[0]).StatusReason() != "" })

	e.end(running.SessionID)
	e.AwaitStatus(head.SessionID, domain.StatusScheduled)
	e.Await("the sessions behind wait with their reasons", func() bool {
		for _, id := range behind {
			if e.Session(id).StatusReason() == "" {
				return false
			}
		}
		return true
	})
	for _, id := range behind {
		if s := e.Session(id); s.Status() != domain.StatusPending {
			t.Fatalf("session %s behind the head: %s", id, s.Status())
		}
	}
	e.CheckCapacity("a1")
	e.checkPlacements(append([]uuid.UUID{running.SessionID, head.SessionID}, behind...))
}

// TestAnArrivalDoesNotPassABlocker: under fifo without skipping, a
// session that found no room blocks the ones behind it; a new session
// that would fit in what is free still waits behind it, whether a full
// round or an arrivals round sees it first.
func TestAnArrivalDoesNotPassABlocker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 0))
	strict := placement.ResourceGroup{Order: placement.OrderFIFO, Selector: placement.SelectorDispersed, SkipAfterTries: 0}
	e.start(scheduler.Config{Interval: 50 * time.Millisecond, Queue: strict})

	running := e.request(cpuMem(3, 1), 1, "")
	e.AwaitStatus(running.SessionID, domain.StatusScheduled)
	blocker := e.request(cpuMem(2, 1), 1, "")
	e.Await("the blocker waits with a reason", func() bool { return e.Session(blocker.SessionID).StatusReason() != "" })
	small := e.request(cpuMem(1, 1), 1, "")
	e.Await("the small session waits with a reason", func() bool { return e.Session(small.SessionID).StatusReason() != "" })
	if s := e.Session(small.SessionID); s.Status() != domain.StatusPending ||
		!slices.ContainsFunc(s.PendingDetails(), func(d string) bool { return d == "waiting for an earlier session (fifo)" }) {
		t.Fatalf("the small session: %s %q", s.Status(), s.PendingDetails())
	}
	e.CheckCapacity("a1")
}

// TestAPeriodicRoundPlacesOnlyWhenTimeMatters: with a queue that nothing
// can let in, periodic rounds (every 10 ms here) do not decide it again;
// each starts_at that passes makes the next one a full round, once.
func TestAPeriodicRoundPlacesOnlyWhenTimeMatters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 0))
	seen := newRounds()
	ticks := make(chan struct{}, 1024)
	lifo := placement.ResourceGroup{Order: placement.OrderLIFO, Selector: placement.SelectorDispersed}
	e.start(scheduler.Config{Interval: 10 * time.Millisecond, Queue: lifo, OnRound: seen.add,
		OnTick: func() {
			select {
			case ticks <- struct{}{}:
			default:
			}
		}})
	// afterTicks waits for n more periodic rounds.
	afterTicks := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-ticks:
			case <-time.After(managertest.WaitTimeout):
				t.Fatal("no periodic round")
			}
		}
	}

	huge := func(after time.Duration) func(*domain.SessionSpec) {
		return func(s *domain.SessionSpec) {
			s.Resources = cpuMem(8, 1) // more than any agent has
			if after > 0 {
				s.StartsAt = e.Clock.Now().Add(after)
			}
		}
	}
	// One at a time, each decided before the next: an arrivals round then
	// decides one session, and only a full round decides them all.
	var queue []uuid.UUID
	for _, after := range []time.Duration{0, 0, time.Hour, 3 * time.Hour} {
		id := e.requestWith(huge(after)).SessionID
		e.Await("the session waits with its reason", func() bool { return e.Session(id).StatusReason() != "" })
		queue = append(queue, id)
	}
	full := func(all []scheduler.RoundReport) int {
		n := 0
		for _, r := range all {
			if r.Sessions == len(queue) {
				n++
			}
		}
		return n
	}
	for len(ticks) > 0 {
		<-ticks
	}
	afterTicks(3)
	if n := full(seen.list()); n != 0 {
		t.Fatalf("%d full rounds before any starts_at passed", n)
	}
	e.Clock.Advance(2 * time.Hour)
	seen.await(t, "the first starts_at makes a full round", func(all []scheduler.RoundReport) bool { return full(all) >= 1 })
	for len(ticks) > 0 {
		<-ticks
	}
	afterTicks(3)
	if n := full(seen.list()); n != 1 {
		t.Fatalf("%d full rounds after the first starts_at, want 1: %+v", n, seen.list())
	}
	e.Clock.Advance(2 * time.Hour)
	seen.await(t, "the second starts_at makes another", func(all []scheduler.RoundReport) bool { return full(all) >= 2 })
	if n := full(seen.list()); n != 2 {
		t.Fatalf("%d full rounds, want 2 (one per starts_at): %+v", n, seen.list())
	}
}
