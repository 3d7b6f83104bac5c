package placement

import "slices"

// candKey names the agents that may serve a demand: its group, its
// architecture and the device kinds it asks for.
type candKey struct {
	group int32
	arch  string
	kinds string
}

// candidates are the pools that may serve a demand. tiers[0] holds the
// pools without accelerators the demand does not use (preferred: a
// CPU-only session should leave GPU agents to GPU sessions), tiers[1] the
// others that have every kind it uses. all is every pool of the group
// with the architecture (what explanations look at).
type candidates struct {
	tiers  [2][]int32
	all    []int32
	tierOf []int8 // per pool: 0, 1, or -1 (not a candidate)
	// noAgent: the group has no schedulable agent at all.
	noAgent bool
}

// candidates returns the pools that may serve d (a demand of a session of
// group gi needing architecture arch), computed once per kind of demand.
func (st *state) candidates(gi int32, arch string, d *demand) *candidates {
	if d.cand == nil {
		key := candKey{group: gi, arch: arch, kinds: d.key}
		c, ok := st.cands[key]
		if !ok {
			c = st.newCandidates(gi, arch, d)
			st.cands[key] = c
		}
		d.cand = c
	}
	return d.cand
}

func (st *state) newCandidates(gi int32, arch string, d *demand) *candidates {
	g := &st.groups[gi]
	c := &candidates{tierOf: make([]int8, len(st.pools)), noAgent: len(g.pools) == 0}
	for i := range c.tierOf {
		c.tierOf[i] = -1
	}
	for _, p := range g.pools {
		pl := &st.pools[p]
		if arch != "" && pl.arch != arch {
			continue
		}
		c.all = append(c.all, p)
		if !subset(d.kinds, pl.kinds) {
			continue
		}
		tier := int8(1)
		if len(pl.kinds) == len(d.kinds) {
			tier = 0
		}
		c.tierOf[p] = tier
		c.tiers[tier] = append(c.tiers[tier], p)
	}
	return c
}

// subset reports whether every element of a (sorted) is in b (sorted).
func subset(a, b []int32) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// choose returns the agent the group's selector picks for d, or -1 when
// no candidate fits. Ties go to the smaller agent id.
func (st *state) choose(g *group, c *candidates, r *request, d *demand) int32 {
	frag := g.cfg.AllowFractionalFragmentation
	if g.cfg.Selector == SelectorRoundRobin {
		return st.chooseRoundRobin(g, c, r, d, frag)
	}
	for tier := range c.tiers {
		best := int32(-1)
		for _, p := range c.tiers[tier] {
			best = st.scanPool(g.cfg.Selector, &st.pools[p], r, d, frag, best)
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}

// leafBlock is how many agents a scan checks one after the other once a
// subtree is that small (cheaper than descending to single leaves).
const leafBlock = 8

// scanPool walks a pool's tree depth first, left to right (agents in id
// order), skipping every subtree whose maxima cannot serve d — or, for
// the dispersed selector, cannot beat the best agent found so far — and
// returns the better of best and the pool's best agent.
func (st *state) scanPool(sel Selector, pl *pool, r *request, d *demand, frag bool, best int32) int32 {
	q := st.prepare(pl, d)
	t := &pl.tree
	if !q.ok || !q.fits(t.node(1), d) {
		return best
	}
	if (sel == SelectorConcentrated || sel == SelectorDispersed) && !st.exhaustive {
		rk := st.rankingFor(pl, d, sel == SelectorDispersed)
		if ai := st.scanRanking(pl, rk, &q, r, d, frag); ai >= 0 && (best < 0 || st.better(sel, ai, best, d)) {
			best = ai
		}
		return best
	}
	block := min(leafBlock, t.size)
	primary := d.slots[0].slot
	stack := append(st.scratch.stack[:0], 1)
	for len(stack) > 0 {
		i := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		v := t.node(i)
		if !q.fits(v, d) || (sel == SelectorDispersed && best >= 0 && v[primary] < st.agents[best].free[primary]) {
			continue
		}
		if i < t.size/block {
			stack = append(stack, int32(2*i+1), int32(2*i))
			continue
		}
		lo, hi := i*block-t.size, min((i+1)*block-t.size, len(pl.agents))
		for leaf := lo; leaf < hi; leaf++ {
			ai := pl.agents[leaf]
			if !q.fits(t.node(t.size+leaf), d) || (!q.exact && !st.fitsDevices(&st.agents[ai], r, d, frag)) {
				continue
			}
			if best < 0 || st.better(sel, ai, best, d) {
				best = ai
			}
		}
	}
	st.scratch.stack = stack
	return best
}

// query is a demand prepared for one pool's tree: the tree column of each
// device need, and whether a leaf's figures decide exactly (no assignment
// to try).
type query struct {
	ok    bool
	cols  []int32 // per d.devs: the column of the kind's largest free device share
	exact bool
	one   []bool // per d.devs: its share kernel must fit on one device on every agent
}

// prepare maps d onto the pool's columns; ok is false when the pool lacks
// a kind d needs.
func (st *state) prepare(pl *pool, d *demand) query {
	q := query{ok: true, cols: st.scratch.cols[:0], one: st.scratch.one[:0], exact: d.simple}
	S := int32(st.slots.size())
	for _, n := range d.devs {
		j := slices.Index(pl.kinds, n.kind)
		if j < 0 {
			return query{}
		}
		q.cols = append(q.cols, S+3*int32(j))
		one := n.sharesMax > 0 && n.sharesMax <= pl.capacity.oneDev[n.kind]
		q.one = append(q.one, one)
		if n.shares > 0 && !one {
			q.exact = false // a split, or a one-device rule that varies by agent
		}
	}
	st.scratch.cols, st.scratch.one = q.cols, q.one
	return q
}

// fits reports whether the maxima v (of one agent or of a subtree) might
// serve d: false is certain; true is certain too for a leaf when q.exact.
func (q *query) fits(v []int64, d *demand) bool {
	for _, sa := range d.slots {
		if v[sa.slot] < sa.amt {
			return false
		}
	}
	for i := range d.devs {
		n, c := &d.devs[i], q.cols[i]
		if v[c+2] < n.whole || v[c+1] < n.shares || (q.one[i] && v[c] < n.sharesMax) {
			return false
		}
	}
	return true
}

// better reports whether agent x beats agent y for d under the selector,
// comparing the demand's slots in order (accelerator, cpu, mem, others):
//   - dispersed: more free;
//   - concentrated: less free;
//   - legacy: more capacity, then more free;
//
// then the smaller agent id (agents are indexed by id).
func (st *state) better(sel Selector, x, y int32, d *demand) bool {
	a, b := &st.agents[x], &st.agents[y]
	if sel == SelectorLegacy {
		for _, sa := range d.slots {
			if ca, cb := a.capacity[sa.slot], b.capacity[sa.slot]; ca != cb {
				return ca > cb
			}
		}
	}
	for _, sa := range d.slots {
		if fa, fb := a.free[sa.slot], b.free[sa.slot]; fa != fb {
			if sel == SelectorConcentrated {
				return fa < fb
			}
			return fa > fb
		}
	}
	return x < y
}

// chooseRoundRobin takes the first agent that fits from the group's
// cursor on, in id order (preferred tier first), and moves the cursor
// past it.
func (st *state) chooseRoundRobin(g *group, c *candidates, r *request, d *demand, frag bool) int32 {
	n := len(g.members)
	if n == 0 {
		return -1
	}
	start := g.rr % n
	for tier := int8(0); tier < 2; tier++ {
		for i := range n {
			m := (start + i) % n
			ai := g.members[m]
			a := &st.agents[ai]
			if a.pool < 0 || c.tierOf[a.pool] != tier {
				continue
			}
			if a.fitsSlots(d.slots) && st.fitsDevices(a, r, d, frag) {
				g.rr = m + 1
				return ai
			}
		}
	}
	return -1
}
