package placement

import "math"

// aggregates summarise agents for explanations: per slot, the largest
// capacity and free amount of any agent; per device kind (indexed by its
// slot), the largest capacity and free share of one device, of all of one
// agent's devices, the largest number of devices (and of entirely free
// ones) on one agent, and oneDev, the smallest over agents of their
// largest device capacity (a share request up to it must fit on one
// device on every agent).
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

// addCapacity adds what an agent has (never changes within a round).
func (st *state) addCapacity(g *aggregates, a *agent) {
	for s, v := range a.capacity {
		g.maxCap[s] = max(g.maxCap[s], v)
	}
	for _, kr := range a.kinds {
		var sum int64
		for i := kr.lo; i < kr.hi; i++ {
			g.devCap[kr.kind] = max(g.devCap[kr.kind], st.devs[i].cap)
			sum += st.devs[i].cap
		}
		g.sumCap[kr.kind] = max(g.sumCap[kr.kind], sum)
		g.wholeCap[kr.kind] = max(g.wholeCap[kr.kind], int64(kr.hi-kr.lo))
		g.oneDev[kr.kind] = min(g.oneDev[kr.kind], kr.maxCap)
	}
}

// mergeCapacity adds another aggregate's capacity part.
func (g *aggregates) mergeCapacity(o *aggregates) {
	for i := range g.maxCap {
		g.maxCap[i] = max(g.maxCap[i], o.maxCap[i])
		g.devCap[i] = max(g.devCap[i], o.devCap[i])
		g.sumCap[i] = max(g.sumCap[i], o.sumCap[i])
		g.wholeCap[i] = max(g.wholeCap[i], o.wholeCap[i])
		g.oneDev[i] = min(g.oneDev[i], o.oneDev[i])
	}
}

// mergeFree adds a pool's free part: the root of its tree.
func (g *aggregates) mergeFree(pl *pool, size int) {
	root := pl.tree.node(1)
	for s := range size {
		g.maxFree[s] = max(g.maxFree[s], root[s])
	}
	for j, k := range pl.kinds {
		c := size + 3*j
		g.devFree[k] = max(g.devFree[k], root[c])
		g.sumFree[k] = max(g.sumFree[k], root[c+1])
		g.wholeFree[k] = max(g.wholeFree[k], root[c+2])
	}
}
