package placement

// maxTree keeps, for a pool's agents, the elementwise maximum of their
// free amounts over every subtree: per slot the free amount, and per
// device kind of the pool the largest free share of one device, the free
// shares of all devices, and the entirely free devices. A placement
// updates the path from its agent's leaf to the root, so the root is
// always exact, and a scan skips every subtree whose maxima cannot serve
// a demand.
type maxTree struct {
	cols int
	size int // leaves, a power of two
	v    []int64
}

func (t *maxTree) node(i int) []int64 { return t.v[i*t.cols : (i+1)*t.cols : (i+1)*t.cols] }

// buildTree sizes a pool's tree and fills it.
func (st *state) buildTree(p int32) {
	pl := &st.pools[p]
	t := &pl.tree
	t.cols = st.slots.size() + 3*len(pl.kinds)
	t.size = 1
	for t.size < len(pl.agents) {
		t.size *= 2
	}
	t.v = make([]int64, 2*t.size*t.cols)
	for leaf, ai := range pl.agents {
		st.writeLeaf(pl, leaf, &st.agents[ai])
	}
	for i := t.size - 1; i >= 1; i-- {
		t.combine(i)
	}
}

func (t *maxTree) combine(i int) {
	n, l, r := t.node(i), t.node(2*i), t.node(2*i+1)
	for c := range n {
		n[c] = max(l[c], r[c])
	}
}

func (st *state) writeLeaf(pl *pool, leaf int, a *agent) {
	v := pl.tree.node(pl.tree.size + leaf)
	S := st.slots.size()
	copy(v, a.free)
	for j, k := range pl.kinds {
		c := S + 3*j
		v[c], v[c+1], v[c+2] = 0, 0, 0
		if kr := a.kindRange(k); kr != nil {
			v[c], v[c+1], v[c+2] = kr.maxFree, kr.sumFree, int64(kr.whole)
		}
	}
}

// update rewrites agent ai's leaf and the path above it.
func (st *state) update(ai int32) {
	a := &st.agents[ai]
	pl := &st.pools[a.pool]
	st.writeLeaf(pl, int(a.leaf), a)
	for i := (pl.tree.size + int(a.leaf)) / 2; i >= 1; i /= 2 {
		pl.tree.combine(i)
	}
	for _, rk := range pl.rankings {
		st.rerank(pl, rk, a.leaf)
	}
}
