package scheduler_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

// rounds records the scheduler's round reports.
type rounds struct {
	mu  sync.Mutex
	all []scheduler.RoundReport
}

func (r *rounds) add(rep scheduler.RoundReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rep)
}

func (r *rounds) list() []scheduler.RoundReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

// TestAnArrivalCostsItsOwnRound: with a queue of sessions that cannot be
// placed and no tick to come, a new session that fits is placed by a
// round that decides on it alone, not on the whole queue.
func TestAnArrivalCostsItsOwnRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.RegisterAgent(agentSpec("a1", 4, 64, 0))
	var seen rounds
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
	e.Await("the round is reported", func() bool {
		all := seen.list()
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
