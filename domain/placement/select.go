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

func (st *state) candidates(gi int32, arch string, d *demand) *candidates {
	key := candKey{group: gi, arch: arch, kinds: d.key}
	if c, ok := st.cands[key]; ok {
		return c
	}
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
	st.cands[key] = c
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
			pl := &st.pools[p]
			if !pl.mayFit(d) {
				continue
			}
			for _, ai := range pl.agents {
				a := &st.agents[ai]
				if !a.fitsSlots(d.slots) || !st.fitsDevices(a, r, d, frag) {
					continue
				}
				if best < 0 || st.better(g.cfg.Selector, ai, best, d) {
					best = ai
				}
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
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
