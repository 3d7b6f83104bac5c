package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

func (st *state) compileAgents(in *Input) error {
	order := make([]int, len(in.Agents))
	ndev := 0
	for i := range order {
		order[i] = i
		ndev += len(in.Agents[i].Devices)
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(in.Agents[a].ID, in.Agents[b].ID) })
	S := st.slots.size()
	slab := make([]int64, 2*S*len(order))
	st.agents = make([]agent, len(order))
	st.devs = make([]device, 0, ndev)
	seenDev := make(map[string]bool, ndev)
	for n, i := range order {
		src := &in.Agents[i]
		if n > 0 && src.ID == st.agents[n-1].id {
			return domain.Invalid(op, "agents", "agent %q listed twice", src.ID)
		}
		a := &st.agents[n]
		*a = agent{id: src.ID, arch: src.Architecture, group: st.groupIndex(src.ResourceGroup), pool: -1,
			capacity: slab[2*S*n : 2*S*n+S : 2*S*n+S], free: slab[2*S*n+S : 2*S*(n+1) : 2*S*(n+1)]}
		st.slots.dense(src.Capacity, a.capacity)
		st.slots.dense(src.Capacity, a.free)
		for name, q := range src.Occupied {
			a.free[st.slots.index[name]] -= int64(q)
		}
		if err := st.compileDevices(a, src, seenDev); err != nil {
			return err
		}
		if a.group >= 0 {
			g := &st.groups[a.group]
			a.member = int32(len(g.members))
			g.members = append(g.members, int32(n))
			if !src.Schedulable {
				a.group = -1 // kept as a member for the cursor, never a candidate
			}
		}
	}
	return nil
}

// compileDevices appends the agent's devices of known kinds, sorted by
// kind then id, and its per-kind ranges.
func (st *state) compileDevices(a *agent, src *Agent, seen map[string]bool) error {
	a.devLo = int32(len(st.devs))
	for _, d := range src.Devices {
		if d.ID == "" || seen[d.ID] {
			return domain.Invalid(op, "agents.devices", "agent %q: device id %q is empty or listed twice", src.ID, d.ID)
		}
		seen[d.ID] = true
		if !domain.IsAccelerator(d.Kind) || d.Kind == domain.SlotCUDAShares || d.ShareCapacity < 0 {
			continue
		}
		kind := st.slots.index[d.Kind]
		capacity := int64(domain.DeviceShareCapacity)
		if kind == st.slots.cudaDevice && d.ShareCapacity > 0 {
			capacity = int64(d.ShareCapacity)
		}
		used := min(max(int64(d.Used), 0), capacity)
		if kind != st.slots.cudaDevice && used > 0 {
			used = capacity // a MIG device is used or free
		}
		st.devs = append(st.devs, device{id: d.ID, kind: kind, cap: capacity, free: capacity - used})
	}
	devs := st.devs[a.devLo:]
	slices.SortFunc(devs, func(x, y device) int {
		if c := cmp.Compare(x.kind, y.kind); c != 0 {
			return c
		}
		return cmp.Compare(x.id, y.id)
	})
	for i := 0; i < len(devs); {
		j := i
		kr := kindRange{kind: devs[i].kind, lo: a.devLo + int32(i)}
		for ; j < len(devs) && devs[j].kind == kr.kind; j++ {
			if devs[j].free == devs[j].cap {
				kr.whole++
			}
			kr.maxCap = max(kr.maxCap, devs[j].cap)
			kr.maxFree = max(kr.maxFree, devs[j].free)
			kr.sumFree += devs[j].free
		}
		kr.hi = a.devLo + int32(j)
		a.kinds = append(a.kinds, kr)
		i = j
	}
	return nil
}

// compilePools groups the schedulable agents of each group by
// architecture and accelerator kinds.
func (st *state) compilePools() {
	S := st.slots.size()
	byKey := map[string]int32{}
	for i := range st.agents {
		a := &st.agents[i]
		if a.group < 0 {
			continue
		}
		g := &st.groups[a.group]
		if g.capTotal == nil {
			g.capTotal = make([]int64, S)
		}
		for s, v := range a.capacity {
			g.capTotal[s] += v
		}
		kinds := st.agentKinds(a)
		// The key adds the accelerator slots offered: agents that serve
		// whole GPUs and agents that serve shares have the same device
		// kind but different aggregates.
		var offered []int
		for s, v := range a.capacity {
			if v > 0 && domain.IsAccelerator(st.slots.names[s]) {
				offered = append(offered, s)
			}
		}
		key := fmt.Sprintf("%d\x00%s\x00%v\x00%v", a.group, a.arch, kinds, offered)
		p, ok := byKey[key]
		if !ok {
			p = int32(len(st.pools))
			byKey[key] = p
			st.pools = append(st.pools, pool{group: a.group, arch: a.arch, kinds: kinds, capacity: newAggregates(S)})
			st.pools[p].capacity.reset()
			g.pools = append(g.pools, p)
		}
		a.pool, a.leaf = p, int32(len(st.pools[p].agents))
		st.pools[p].agents = append(st.pools[p].agents, int32(i))
		st.addCapacity(&st.pools[p].capacity, a)
	}
	for p := range st.pools {
		st.buildTree(int32(p))
	}
}

// agentKinds is the sorted set of accelerator kinds an agent has, by its
// devices and by the accelerator slots of its capacity.
func (st *state) agentKinds(a *agent) []int32 {
	var kinds []int32
	for _, kr := range a.kinds {
		kinds = append(kinds, kr.kind)
	}
	for s, v := range a.capacity {
		if v > 0 && domain.IsAccelerator(st.slots.names[s]) {
			kinds = append(kinds, st.slots.deviceKind(int32(s)))
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}
