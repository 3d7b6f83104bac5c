package placement

import "math"

// aggregates summarise a pool's agents for the two uses that must not
// look at every agent: ruling a pool out before scanning it, and
// explaining why no agent fits. Per slot: the largest capacity and free
// amount of any agent. Per device kind (indexed by its slot): the largest
// capacity and free share of one device, of all of one agent's devices,
// the largest number of devices (and of entirely free ones) on one agent,
// and oneDev, the smallest over agents of their largest device capacity
// (a share request up to it must fit on one device on every agent).
type aggregates struct {
	maxCap, maxFree     []int64
	devCap, devFree     []int64
	sumCap, sumFree     []int64
	wholeCap, wholeFree []int64
	oneDev              []int64
}

func newAggregates(size int) aggregates {
	slab := make([]int64, 9*size)
	at := func(i int) []int64 { return slab[i*size : (i+1)*size : (i+1)*size] }
	return aggregates{
		maxCap: at(0), maxFree: at(1), devCap: at(2), devFree: at(3), sumCap: at(4), sumFree: at(5),
		wholeCap: at(6), wholeFree: at(7), oneDev: at(8),
	}
}

func (g *aggregates) reset() {
	for _, v := range [][]int64{g.maxCap, g.maxFree, g.devCap, g.devFree, g.sumCap, g.sumFree, g.wholeCap, g.wholeFree} {
		clear(v)
	}
	for i := range g.oneDev {
		g.oneDev[i] = math.MaxInt64
	}
}

func (st *state) addAgent(g *aggregates, a *agent) {
	for s := range a.capacity {
		g.maxCap[s] = max(g.maxCap[s], a.capacity[s])
		g.maxFree[s] = max(g.maxFree[s], a.free[s])
	}
	for _, kr := range a.kinds {
		var sumCap, sumFree int64
		for i := kr.lo; i < kr.hi; i++ {
			d := &st.devs[i]
			g.devCap[kr.kind] = max(g.devCap[kr.kind], d.cap)
			g.devFree[kr.kind] = max(g.devFree[kr.kind], d.free)
			sumCap += d.cap
			sumFree += d.free
		}
		g.sumCap[kr.kind] = max(g.sumCap[kr.kind], sumCap)
		g.sumFree[kr.kind] = max(g.sumFree[kr.kind], sumFree)
		g.wholeCap[kr.kind] = max(g.wholeCap[kr.kind], int64(kr.hi-kr.lo))
		g.wholeFree[kr.kind] = max(g.wholeFree[kr.kind], int64(kr.whole))
		g.oneDev[kr.kind] = min(g.oneDev[kr.kind], kr.maxCap)
	}
}

func (g *aggregates) merge(o *aggregates) {
	for i := range g.maxCap {
		g.maxCap[i] = max(g.maxCap[i], o.maxCap[i])
		g.maxFree[i] = max(g.maxFree[i], o.maxFree[i])
		g.devCap[i] = max(g.devCap[i], o.devCap[i])
		g.devFree[i] = max(g.devFree[i], o.devFree[i])
		g.sumCap[i] = max(g.sumCap[i], o.sumCap[i])
		g.sumFree[i] = max(g.sumFree[i], o.sumFree[i])
		g.wholeCap[i] = max(g.wholeCap[i], o.wholeCap[i])
		g.wholeFree[i] = max(g.wholeFree[i], o.wholeFree[i])
		g.oneDev[i] = min(g.oneDev[i], o.oneDev[i])
	}
}

// refresh recomputes a pool's aggregates from its agents.
func (st *state) refresh(p int32) {
	pl := &st.pools[p]
	if !pl.dirty {
		return
	}
	if pl.agg.maxCap == nil {
		pl.agg = newAggregates(st.slots.size())
	}
	pl.agg.reset()
	for _, ai := range pl.agents {
		st.addAgent(&pl.agg, &st.agents[ai])
	}
	pl.dirty = false
}

// mayFit reports whether some agent of the pool might take d, by the
// pool's aggregates. They are upper bounds even when stale (free amounts
// only go down within a round), so false is certain; true needs a scan.
func (pl *pool) mayFit(d *demand) bool {
	g := &pl.agg
	for _, sa := range d.slots {
		if g.maxFree[sa.slot] < sa.amt {
			return false
		}
	}
	for _, n := range d.devs {
		if g.wholeFree[n.kind] < n.whole {
			return false
		}
		if n.shares > 0 && (g.sumFree[n.kind] < n.shares || (n.sharesMax <= g.oneDev[n.kind] && g.devFree[n.kind] < n.sharesMax)) {
			return false
		}
	}
	return true
}
