package placement

import "sort"

// ranking keeps a pool's agents sorted by a selector's preference for
// demands of one slot list: by the free amounts of those slots in order,
// ascending (concentrated: least free first) or descending (dispersed:
// most free first), then by agent id. The first agent in a ranking that
// fits a demand is therefore the one the selector picks, and a scan stops
// there. A placement moves its agent to its new rank (free amounts only
// change one agent at a time).
type ranking struct {
	slots []int32
	desc  bool
	order []int32 // leaves of the pool, best first
	pos   []int32 // leaf → index in order
}

// rankingFor returns the pool's ranking for d's slots, building it the
// first time.
func (st *state) rankingFor(pl *pool, d *demand, desc bool) *ranking {
	for _, rk := range pl.rankings {
		if rk.desc == desc && slotsEqual(rk.slots, d.slots) {
			return rk
		}
	}
	rk := &ranking{desc: desc, order: make([]int32, len(pl.agents)), pos: make([]int32, len(pl.agents))}
	for _, sa := range d.slots {
		rk.slots = append(rk.slots, sa.slot)
	}
	for i := range rk.order {
		rk.order[i] = int32(i)
	}
	sort.Slice(rk.order, func(i, j int) bool { return st.ranksBefore(pl, rk, rk.order[i], rk.order[j]) })
	for i, leaf := range rk.order {
		rk.pos[leaf] = int32(i)
	}
	pl.rankings = append(pl.rankings, rk)
	return rk
}

func slotsEqual(a []int32, b []slotAmt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i].slot {
			return false
		}
	}
	return true
}

// ranksBefore reports whether leaf x comes before leaf y.
func (st *state) ranksBefore(pl *pool, rk *ranking, x, y int32) bool {
	fx, fy := st.agents[pl.agents[x]].free, st.agents[pl.agents[y]].free
	for _, s := range rk.slots {
		if fx[s] != fy[s] {
			return (fx[s] > fy[s]) == rk.desc
		}
	}
	return x < y
}

// rerank moves a leaf whose free amounts changed to its new rank.
func (st *state) rerank(pl *pool, rk *ranking, leaf int32) {
	p := int(rk.pos[leaf])
	n := len(rk.order) - 1
	// The insertion point among the others (order without p).
	at := func(k int) int32 {
		if k >= p {
			return rk.order[k+1]
		}
		return rk.order[k]
	}
	q := sort.Search(n, func(k int) bool { return st.ranksBefore(pl, rk, leaf, at(k)) })
	switch {
	case q < p:
		copy(rk.order[q+1:p+1], rk.order[q:p])
		for k := q + 1; k <= p; k++ {
			rk.pos[rk.order[k]] = int32(k)
		}
	case q > p:
		copy(rk.order[p:q], rk.order[p+1:q+1])
		for k := p; k < q; k++ {
			rk.pos[rk.order[k]] = int32(k)
		}
	}
	rk.order[q] = leaf
	rk.pos[leaf] = int32(q)
}

// scanRanking returns the first agent of the pool's ranking that takes d,
// or -1. Ascending, it starts at the first agent with enough of the first
// slot; descending, it stops at the first with too little.
func (st *state) scanRanking(pl *pool, rk *ranking, q *query, r *request, d *demand, frag bool) int32 {
	first, need := d.slots[0].slot, d.slots[0].amt
	t := &pl.tree
	start := 0
	if !rk.desc {
		start = sort.Search(len(rk.order), func(k int) bool {
			return st.agents[pl.agents[rk.order[k]]].free[first] >= need
		})
	}
	for _, leaf := range rk.order[start:] {
		ai := pl.agents[leaf]
		if rk.desc && st.agents[ai].free[first] < need {
			break
		}
		if q.fits(t.node(t.size+int(leaf)), d) && (q.exact || st.fitsDevices(&st.agents[ai], r, d, frag)) {
			return ai
		}
	}
	return -1
}
