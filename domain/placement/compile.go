package placement

import (
	"bytes"
	"cmp"
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
