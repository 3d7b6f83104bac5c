package placement_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

func grouped(g placement.ResourceGroup, sessions []placement.Session, agents ...placement.Agent) placement.Input {
	g.Name = "default"
	return placement.Input{Now: t0.Add(24 * time.Hour), Sessions: sessions, Agents: agents, Groups: []placement.ResourceGroup{g}}
}

func withPriority(s placement.Session, p int) placement.Session { s.Priority = p; return s }
func withTries(s placement.Session, n int) placement.Session    { s.Tries = n; return s }
func withKey(s placement.Session, ak string) placement.Session  { s.AccessKey = ak; return s }

func TestOrders(t *testing.T) {
	t.Parallel()
	big := func(n int) placement.Session { return sess(n, cpuMem(6, 1), 1) }
	small := func(n int) placement.Session { return sess(n, cpuMem(2, 1), 1) }
	agent := gpuAgent("a1", 8, 64)
	agent.Occupied = cpuMem(4, 0) // 4 cpus free: a big one waits
	cases := []struct {
		name     string
		group    placement.ResourceGroup
		sessions []placement.Session
		placed   []uuid.UUID
		blocked  []uuid.UUID
	}{
		{"fifo: oldest first", placement.ResourceGroup{},
			[]placement.Session{small(3), small(1), small(2)}, []uuid.UUID{sid(1), sid(2)}, nil},
		{"fifo: priority before age", placement.ResourceGroup{},
			[]placement.Session{small(1), small(2), withPriority(small(3), 50)}, []uuid.UUID{sid(3), sid(1)}, nil},
		{"fifo: a head that waits for room blocks the queue behind it, lower priorities too", placement.ResourceGroup{},
			[]placement.Session{big(1), small(2), withPriority(small(3), 5)}, nil, []uuid.UUID{sid(2), sid(3)}},
		{"fifo: a head that has failed SkipAfterTries tries no longer blocks", placement.ResourceGroup{SkipAfterTries: 3},
			[]placement.Session{withTries(big(1), 3), small(2), big(3), small(4)}, []uuid.UUID{sid(2)}, []uuid.UUID{sid(4)}},
		{"fifo: a request no agent could ever hold does not block", placement.ResourceGroup{},
			[]placement.Session{sess(1, cpuMem(64, 1), 1), small(2)}, []uuid.UUID{sid(2)}, nil},
		{"fifo: a session failing its own checks does not block", placement.ResourceGroup{},
			[]placement.Session{func() placement.Session { s := big(1); s.StartsAt = t0.Add(48 * time.Hour); return s }(), small(2)},
			[]uuid.UUID{sid(2)}, nil},
		{"lifo: newest first, nothing blocks", placement.ResourceGroup{Order: placement.OrderLIFO},
			[]placement.Session{small(1), big(4), small(2), small(3)}, []uuid.UUID{sid(3), sid(2)}, nil},
		{"drf: the key with the lowest dominant share next", placement.ResourceGroup{Order: placement.OrderDRF},
			[]placement.Session{withKey(small(1), "A"), withKey(small(2), "A"), withKey(small(3), "B")}, []uuid.UUID{sid(1), sid(3)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := place(t, grouped(c.group, c.sessions, agent))
			if !slices.Equal(order(r), c.placed) {
				t.Fatalf("placed %v, want %v", order(r), c.placed)
			}
			for _, u := range r.Unplaced {
				blocked := slices.Contains(c.blocked, u.SessionID)
				if hasCheck(u, placement.CheckBlocked) != blocked || u.Tried == blocked {
					t.Fatalf("session %s: blocked %v tried %v, want blocked %v: %q", u.SessionID, hasCheck(u, placement.CheckBlocked), u.Tried, blocked, u.Details())
				}
			}
		})
	}
}

func hasCheck(u placement.Unplaced, c placement.Check) bool {
	return slices.ContainsFunc(u.Failures, func(f placement.Failure) bool { return f.Check == c })
}

// TestDRFUsesExistingOccupancy: a key that already holds much of the
// group goes after one that holds little, whatever their ages.
func TestDRFUsesExistingOccupancy(t *testing.T) {
	t.Parallel()
	in := grouped(placement.ResourceGroup{Order: placement.OrderDRF},
		[]placement.Session{withKey(sess(1, cpuMem(2, 1), 1), "heavy"), withKey(sess(2, cpuMem(2, 1), 1), "light")},
		gpuAgent("a1", 10, 64))
	in.Agents[0].Occupied = cpuMem(6, 0)
	in.Quotas.Keypairs = map[string]placement.KeypairUsage{
		"heavy": {Usage: placement.Usage{Occupied: cpuMem(5, 0)}},
		"light": {Usage: placement.Usage{Occupied: cpuMem(1, 0)}},
	}
	r := place(t, in)
	if !slices.Equal(order(r), []uuid.UUID{sid(2), sid(1)}) {
		t.Fatalf("placed %v", order(r))
	}
}

// TestBlockingIsPerGroup: a blocked fifo queue in one group does not stop
// another group's.
func TestBlockingIsPerGroup(t *testing.T) {
	t.Parallel()
	other := gpuAgent("b1", 8, 64)
	other.ResourceGroup = "other"
	in := grouped(placement.ResourceGroup{}, []placement.Session{sess(1, cpuMem(8, 1), 1), sess(2, cpuMem(1, 1), 1), func() placement.Session {
		s := sess(3, cpuMem(1, 1), 1)
		s.ResourceGroup = "other"
		return s
	}()}, func() placement.Agent { a := gpuAgent("a1", 8, 64); a.Occupied = cpuMem(4, 0); return a }(), other)
	in.Groups = append(in.Groups, placement.ResourceGroup{Name: "other"})
	r := place(t, in)
	if !slices.Equal(order(r), []uuid.UUID{sid(3)}) || !hasCheck(unplaced(t, r, sid(2)), placement.CheckBlocked) {
		t.Fatalf("placed %v, unplaced %+v", order(r), r.Unplaced)
	}
	wantDetails(t, r, sid(2), domain.ReasonNoAvailableInstances, `waiting for an earlier session in resource group "default" (fifo)`)
}

func TestSelectors(t *testing.T) {
	t.Parallel()
	agents := []placement.Agent{gpuAgent("a1", 4, 64), gpuAgent("a2", 16, 64), gpuAgent("a3", 8, 64), gpuAgent("a4", 8, 64)}
	agents[1].Occupied = cpuMem(13, 0) // a2: the largest, 3 free
	three := []placement.Session{sess(1, cpuMem(2, 1), 1), sess(2, cpuMem(2, 1), 1), sess(3, cpuMem(2, 1), 1)}
	cases := []struct {
		selector placement.Selector
		next     int
		want     []string
		wantNext int
	}{
		{placement.SelectorDispersed, 0, []string{"a3", "a4", "a3"}, 0},
		{placement.SelectorConcentrated, 0, []string{"a2", "a1", "a1"}, 0},
		{placement.SelectorLegacy, 0, []string{"a2", "a3", "a4"}, 0},
		{placement.SelectorRoundRobin, 0, []string{"a1", "a2", "a3"}, 3},
		{placement.SelectorRoundRobin, 3, []string{"a4", "a1", "a2"}, 2},
		{placement.SelectorRoundRobin, 9, []string{"a2", "a3", "a4"}, 0},
	}
	for _, c := range cases {
		t.Run(string(c.selector), func(t *testing.T) {
			t.Parallel()
			r := place(t, grouped(placement.ResourceGroup{Selector: c.selector, RoundRobinNext: c.next}, three, agents...))
			var got []string
			for _, p := range r.Placed {
				got = append(got, p.Kernels[0].AgentID)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("placed on %v, want %v", got, c.want)
			}
			if next, ok := r.RoundRobinNext["default"]; ok != (c.selector == placement.SelectorRoundRobin) || next != c.wantNext {
				t.Fatalf("next %d %v, want %d", next, ok, c.wantNext)
			}
		})
	}
}

// TestConcentratedPacksShares: bin packing fills the fullest agent that
// still holds the request, so whole GPUs stay whole elsewhere.
func TestConcentratedPacksShares(t *testing.T) {
	t.Parallel()
	in := grouped(placement.ResourceGroup{Selector: placement.SelectorConcentrated}, []placement.Session{
		sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1),
		sess(2, with(cpuMem(1, 1), domain.SlotCUDADevice, domain.Units(2)), 1),
	}, gpuAgent("a1", 8, 64, "1", "1"), gpuAgent("a2", 8, 64, "1", "0.6"))
	in.Agents[1].Occupied = domain.Slots{domain.SlotCUDAShares: q("0.4")}
	r := place(t, in)
	if got := []string{agentsOf(r, sid(1))[0], agentsOf(r, sid(2))[0]}; !slices.Equal(got, []string{"a2", "a1"}) {
		t.Fatalf("placed on %v", got)
	}
}

// TestResultOrder: Result.Order lists every session once, in the order
// the round decided them (the queue an explanation reports positions in).
func TestResultOrder(t *testing.T) {
	t.Parallel()
	small := func(n int) placement.Session { return sess(n, cpuMem(2, 1), 1) }
	agent := gpuAgent("a1", 8, 64)
	for _, c := range []struct {
		name  string
		group placement.ResourceGroup
		want  []uuid.UUID
	}{
		{"fifo", placement.ResourceGroup{}, []uuid.UUID{sid(4), sid(1), sid(2), sid(3)}},
		{"lifo", placement.ResourceGroup{Order: placement.OrderLIFO}, []uuid.UUID{sid(4), sid(3), sid(2), sid(1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := place(t, grouped(c.group, []placement.Session{small(3), small(1), withPriority(small(4), 50), small(2)}, agent))
			if !slices.Equal(r.Order, c.want) {
				t.Fatalf("order %v, want %v", r.Order, c.want)
			}
		})
	}
}
