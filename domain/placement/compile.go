package placement

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

const op = "placement.place"

// compile checks the input's structure and builds the round's state.
// Structural mistakes (two agents, devices, sessions or kernels with one
// id; an unknown order or selector) are errors; what is wrong with one
// session's request is that session's failure instead.
func compile(in *Input) (*state, error) {
	st := &state{now: in.Now, cands: map[candKey]*candidates{}}
	st.slots = newSlotTable(slotNames(in))
	if err := st.compileGroups(in); err != nil {
		return nil, err
	}
	if err := st.compileAgents(in); err != nil {
		return nil, err
	}
	st.compilePools()
	if err := st.compileRequests(in); err != nil {
		return nil, err
	}
	st.quota = newQuotaState(&st.slots, &in.Quotas)
	return st, nil
}

// slotNames collects every slot the input mentions.
func slotNames(in *Input) map[domain.SlotName]bool {
	names := map[domain.SlotName]bool{}
	add := func(s domain.Slots) {
		for n := range s {
			names[n] = true
		}
	}
	for i := range in.Agents {
		a := &in.Agents[i]
		add(a.Capacity)
		add(a.Occupied)
		for _, d := range a.Devices {
			names[d.Kind] = true
		}
	}
	for i := range in.Sessions {
		for _, k := range in.Sessions[i].Kernels {
			add(k.Slots)
		}
	}
	q := &in.Quotas
	for _, u := range q.Keypairs {
		add(u.Limits)
		add(u.Occupied)
	}
	for _, m := range []map[string]Usage{q.Users, q.Projects, q.Domains} {
		for _, u := range m {
			add(u.Limits)
			add(u.Occupied)
		}
	}
	return names
}

func (st *state) compileGroups(in *Input) error {
	if len(in.Groups) == 0 {
		cfg, err := in.Ungrouped.normalized()
		if err != nil {
			return domain.Invalid(op, "ungrouped", "%v", err)
		}
		st.ungrouped = true
		st.groups = []group{{cfg: cfg, rr: cfg.RoundRobinNext}}
		return nil
	}
	st.groups = make([]group, len(in.Groups))
	for i, g := range in.Groups {
		cfg, err := g.normalized()
		if err != nil {
			return domain.Invalid(op, "groups", "%v", err)
		}
		st.groups[i] = group{cfg: cfg, rr: cfg.RoundRobinNext}
	}
	slices.SortFunc(st.groups, func(a, b group) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	for i := 1; i < len(st.groups); i++ {
		if st.groups[i].cfg.Name == st.groups[i-1].cfg.Name {
			return domain.Invalid(op, "groups", "resource group %q listed twice", st.groups[i].cfg.Name)
		}
	}
	return nil
}

func (st *state) groupIndex(name string) int32 {
	if st.ungrouped {
		return 0
	}
	i, ok := slices.BinarySearchFunc(st.groups, name, func(g group, n string) int { return cmp.Compare(g.cfg.Name, n) })
	if !ok {
		return -1
	}
	return int32(i)
}

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

func (st *state) compileRequests(in *Input) error {
	if err := uniqueIDs(in.Sessions); err != nil {
		return err
	}
	st.reqs = make([]request, len(in.Sessions))
	sl := &slabs{kinds: map[int32]string{}}
	for i := range in.Sessions {
		st.reqs[i] = st.compileRequest(&in.Sessions[i], sl)
	}
	for i := range st.reqs {
		r := &st.reqs[i]
		if r.group >= 0 {
			st.groups[r.group].queue = append(st.groups[r.group].queue, r)
		}
	}
	for gi := range st.groups {
		g := &st.groups[gi]
		lifo := g.cfg.Order == OrderLIFO
		slices.SortFunc(g.queue, func(a, b *request) int { return compareQueue(a.s, b.s, lifo) })
	}
	return nil
}

// uniqueIDs refuses two sessions, or two kernels, with one id.
func uniqueIDs(sessions []Session) error {
	ids := make([]uuid.UUID, 0, len(sessions))
	var kernels []uuid.UUID
	for i := range sessions {
		ids = append(ids, sessions[i].ID)
		for _, k := range sessions[i].Kernels {
			kernels = append(kernels, k.ID)
		}
	}
	for _, list := range []struct {
		field string
		ids   []uuid.UUID
	}{{"sessions", ids}, {"sessions.kernels", kernels}} {
		slices.SortFunc(list.ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
		for i := 1; i < len(list.ids); i++ {
			if list.ids[i] == list.ids[i-1] {
				return domain.Invalid(op, list.field, "id %s listed twice", list.ids[i])
			}
		}
	}
	return nil
}

// compareQueue orders a group's queue: priority first, then oldest (or
// newest, for lifo) enqueue time and sequence, then session id.
func compareQueue(a, b *Session, lifo bool) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	c := a.EnqueuedAt.Compare(b.EnqueuedAt)
	if c == 0 {
		c = cmp.Compare(a.EnqueuedSeq, b.EnqueuedSeq)
	}
	if lifo {
		c = -c
	}
	if c != 0 {
		return c
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}
