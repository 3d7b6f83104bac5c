package placement

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// run decides every session: first those with no group they may use,
// then priority level by priority level (highest first), each group's
// sessions of that level in the group's order.
func (st *state) run() {
	var orphans []*request
	for i := range st.reqs {
		if r := &st.reqs[i]; r.group < 0 {
			orphans = append(orphans, r)
		}
	}
	slices.SortFunc(orphans, func(a, b *request) int { return compareQueue(a.s, b.s, false) })
	for _, r := range orphans {
		st.predicates(r)
		st.unplace(r, true)
	}

	var levels []int
	for gi := range st.groups {
		for _, r := range st.groups[gi].queue {
			levels = append(levels, r.s.Priority)
		}
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	slices.Reverse(levels)
	next := make([]int, len(st.groups))
	for _, level := range levels {
		for gi := range st.groups {
			g := &st.groups[gi]
			start, end := next[gi], next[gi]
			for end < len(g.queue) && g.queue[end].s.Priority == level {
				end++
			}
			next[gi] = end
			if g.cfg.Order == OrderDRF {
				st.runDRF(g, g.queue[start:end])
				continue
			}
			for _, r := range g.queue[start:end] {
				st.consider(g, r)
			}
		}
	}
	for gi := range st.groups {
		g := &st.groups[gi]
		if g.cfg.Selector != SelectorRoundRobin {
			continue
		}
		if st.out.RoundRobinNext == nil {
			st.out.RoundRobinNext = map[string]int{}
		}
		n := g.rr
		if len(g.members) > 0 {
			n %= len(g.members)
		}
		st.out.RoundRobinNext[g.cfg.Name] = n
	}
}

// consider decides one session of group g and reports whether it was
// placed. Its checks are all evaluated: a session that fails one of its
// own checks is still tried against the agents (without taking anything)
// so that a lack of room is reported too. Under fifo, a session that
// passes its checks, finds no room, could fit in the group, and has not
// yet failed SkipAfterTries tries blocks every later session of the
// group in this round: they are reported blocked and not tried.
func (st *state) consider(g *group, r *request) bool {
	st.predicates(r)
	if r.invalid != "" {
		st.unplace(r, true)
		return false
	}
	if g.blocker != nil {
		r.fail(Failure{Check: CheckBlocked, Subject: g.cfg.Name, Session: g.blocker.s.ID,
			Message: "waiting for an earlier session" + st.inGroup(g) + " (fifo)"})
		st.unplace(r, false)
		return false
	}
	passed := r.passed()
	kernels, ok := st.placeRequest(g, r, passed)
	if ok && passed {
		st.out.Placed = append(st.out.Placed, Placement{SessionID: r.s.ID, Kernels: kernels})
		st.out.Order = append(st.out.Order, r.s.ID)
		st.quota.charge(r)
		return true
	}
	impossible := false
	if !ok {
		impossible = st.explain(g, r)
	}
	st.unplace(r, true)
	skip := g.cfg.SkipAfterTries
	if g.cfg.Order == OrderFIFO && passed && !ok && !impossible && (skip == 0 || r.s.Tries < skip) {
		g.blocker = r
	}
	return false
}

func (st *state) unplace(r *request, tried bool) {
	st.out.Unplaced = append(st.out.Unplaced, Unplaced{SessionID: r.s.ID, Reason: r.reason(), Failures: r.failures, Tried: tried})
	st.out.Order = append(st.out.Order, r.s.ID)
}

// placeRequest finds agents for every demand of r. With commit it takes
// them and returns the placements; without, it only reports whether they
// exist and leaves the state (round-robin cursor included) as it was.
// A multi-node session's kernels are taken one by one in a trial that is
// rolled back when one finds no agent: all or nothing.
func (st *state) placeRequest(g *group, r *request, commit bool) ([]domain.KernelPlacement, bool) {
	frag := g.cfg.AllowFractionalFragmentation
	rr := g.rr
	if len(r.demands) == 1 {
		d := &r.demands[0]
		ai := st.choose(g, st.candidates(r.group, r.s.Architecture, d), r, d)
		if ai < 0 || !commit {
			g.rr = rr
			return nil, ai >= 0
		}
		out := make([]domain.KernelPlacement, len(r.kernels))
		if !st.assign(&st.agents[ai], r, d, frag, true) {
			return nil, false // choose and assign disagree: never observed, never taken
		}
		st.take(ai, r, d, out)
		return out, true
	}
	out := make([]domain.KernelPlacement, len(r.kernels))
	st.beginTrial()
	for i := range r.demands {
		d := &r.demands[i]
		ai := st.choose(g, st.candidates(r.group, r.s.Architecture, d), r, d)
		if ai < 0 {
			st.rollback()
			g.rr = rr
			return nil, false
		}
		if !st.assign(&st.agents[ai], r, d, frag, true) {
			st.rollback()
			g.rr = rr
			return nil, false
		}
		st.take(ai, r, d, out)
	}
	if !commit {
		st.rollback()
		g.rr = rr
		return nil, true
	}
	st.commit()
	return out, true
}

// runDRF decides one priority level of a drf group: repeatedly the
// access key with the lowest dominant share (then the smaller key) gets
// its oldest undecided session considered; nothing blocks.
func (st *state) runDRF(g *group, batch []*request) {
	byKey := map[string]*drfKey{}
	var h drfHeap
	for _, r := range batch {
		k := byKey[r.s.AccessKey]
		if k == nil {
			k = &drfKey{key: r.s.AccessKey, share: st.quota.dominantShare(g, r.s.AccessKey)}
			byKey[r.s.AccessKey] = k
			h = append(h, k)
		}
		k.queue = append(k.queue, r)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		k := h[0]
		r := k.queue[0]
		k.queue = k.queue[1:]
		if st.consider(g, r) {
			k.share = st.quota.dominantShare(g, k.key)
		}
		if len(k.queue) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
}

type drfKey struct {
	key   string
	share float64
	queue []*request
}

type drfHeap []*drfKey

func (h drfHeap) Len() int { return len(h) }
func (h drfHeap) Less(i, j int) bool {
	if h[i].share != h[j].share {
		return h[i].share < h[j].share
	}
	return cmp.Less(h[i].key, h[j].key)
}
func (h drfHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *drfHeap) Push(x any)   { *h = append(*h, x.(*drfKey)) }
func (h *drfHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
