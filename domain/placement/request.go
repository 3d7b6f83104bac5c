package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// request is one Session compiled: its amounts as slot vectors and what
// must be placed together (demands).
type request struct {
	s     *Session
	group int32 // -1: no group it may use (see groupFailure)
	// groupFailure says why the session has no group, when it has none.
	groupFailure string
	// invalid says what is wrong with the request, when something is.
	invalid string
	// total is the sum over the kernels, by slot name (quotas, drf).
	total   []slotAmt
	kernels []kernelReq
	// demands are placed in order: one with every kernel for a single-node
	// session, one per kernel for a multi-node one.
	demands  []demand
	failures []Failure
}

// kernelReq is one kernel's slots and its accelerator request.
type kernelReq struct {
	slots []slotAmt // selectors' order
	// kind is the device kind its accelerator slot takes (-1: none);
	// whole is set for whole devices (count devices) and clear for
	// cuda.shares (amt shares).
	kind  int32
	slot  int32
	whole bool
	amt   int64
}

// demand is kernels that must go on one agent.
type demand struct {
	slots   []slotAmt // their sum, selectors' order
	kernels []int32   // in session order
	// assign is kernels in the order devices are given: whole devices
	// first, then shares largest first (they pack better that way).
	assign []int32
	// devs sums the device needs per kind.
	devs  []devNeed
	kinds []int32 // sorted device kinds
	key   string  // kinds as a map key
	cand  *candidates
	// simple: at most one kernel with devices, so counts (whole devices)
	// or one device's free share (small shares) decide whether an agent
	// fits without trying an assignment.
	simple bool
}

// devNeed is what a demand asks of one device kind.
type devNeed struct {
	kind  int32
	whole int64 // entirely free devices
	// shares in total, and the largest one kernel asks.
	shares, sharesMax int64
}

func (st *state) compileRequest(s *Session, sl *slabs) request {
	r := request{s: s, group: st.groupIndex(s.ResourceGroup)}
	if !st.ungrouped {
		switch {
		case r.group < 0:
			r.groupFailure = fmt.Sprintf("resource group %q does not exist", s.ResourceGroup)
		case st.groups[r.group].cfg.Inactive:
			r.groupFailure = fmt.Sprintf("resource group %q is not active", s.ResourceGroup)
		case !st.groups[r.group].cfg.Access.allows(s):
			r.groupFailure = fmt.Sprintf("resource group %q is not allowed for this session's domain, project or keypair", s.ResourceGroup)
		}
		if r.groupFailure != "" {
			r.group = -1
		}
	}
	if msg := validate(s); msg != "" {
		r.invalid = msg
		return r
	}
	total := sl.total(st.slots.size())
	r.kernels = sl.kernels(len(s.Kernels))
	for i, k := range s.Kernels {
		kr := kernelReq{slots: sl.amounts(len(k.Slots)), kind: -1, slot: -1}
		for name, v := range k.Slots {
			if v > 0 {
				slot := st.slots.index[name]
				kr.slots = append(kr.slots, slotAmt{slot: slot, amt: int64(v)})
				total[slot] += int64(v)
			}
		}
		st.slots.sortForSelection(kr.slots)
		for _, sa := range kr.slots {
			if domain.IsAccelerator(st.slots.names[sa.slot]) {
				kr.slot, kr.kind, kr.amt = sa.slot, st.slots.deviceKind(sa.slot), sa.amt
				kr.whole = sa.slot != st.slots.cudaShares
				if kr.whole {
					kr.amt /= domain.QuantityScale
				}
			}
		}
		r.kernels[i] = kr
	}
	n := 0
	for _, v := range total {
		if v > 0 {
			n++
		}
	}
	r.total = sl.amounts(n)
	for slot, v := range total {
		if v > 0 {
			r.total = append(r.total, slotAmt{slot: int32(slot), amt: v})
		}
	}
	if s.ClusterMode == domain.ClusterMultiNode {
		r.demands = make([]demand, len(r.kernels))
		for i := range r.kernels {
			r.demands[i] = st.newDemand(&r, sl.index(int32(i)), sl)
		}
	} else {
		all := sl.indexes(len(r.kernels))
		r.demands = []demand{st.newDemand(&r, all, sl)}
	}
	return r
}

// slabs hands out the small slices of many requests from a few large
// arrays: one round compiles thousands of sessions.
type slabs struct {
	amt   []slotAmt
	kern  []kernelReq
	idx   []int32
	vec   []int64
	seq   []int32 // 0, 1, 2, ... shared by every demand of one kernel
	kinds map[int32]string
}

func (sl *slabs) amounts(n int) []slotAmt {
	if len(sl.amt)+n > cap(sl.amt) {
		sl.amt = make([]slotAmt, 0, max(4096, n))
	}
	out := sl.amt[len(sl.amt) : len(sl.amt) : len(sl.amt)+n]
	sl.amt = sl.amt[:len(sl.amt)+n]
	return out
}

func (sl *slabs) kernels(n int) []kernelReq {
	if len(sl.kern)+n > cap(sl.kern) {
		sl.kern = make([]kernelReq, 0, max(1024, n))
	}
	out := sl.kern[len(sl.kern) : len(sl.kern)+n : len(sl.kern)+n]
	sl.kern = sl.kern[:len(sl.kern)+n]
	return out
}

// indexes returns 0..n-1 (shared: callers must not write to it).
func (sl *slabs) indexes(n int) []int32 {
	for len(sl.seq) < n {
		sl.seq = append(sl.seq, int32(len(sl.seq)))
	}
	return sl.seq[:n:n]
}

// index returns {i} (shared).
func (sl *slabs) index(i int32) []int32 { return sl.indexes(int(i) + 1)[i : i+1 : i+1] }

// total returns a zeroed scratch vector of n slots.
func (sl *slabs) total(n int) []int64 {
	if len(sl.vec) < n {
		sl.vec = make([]int64, n)
	}
	clear(sl.vec[:n])
	return sl.vec[:n]
}

func (st *state) newDemand(r *request, kernels []int32, sl *slabs) demand {
	d := demand{kernels: kernels, assign: kernels}
	if len(kernels) == 1 {
		d.slots = r.kernels[kernels[0]].slots
	} else {
		sum := sl.total(st.slots.size())
		for _, k := range kernels {
			for _, sa := range r.kernels[k].slots {
				sum[sa.slot] += sa.amt
			}
		}
		for s, v := range sum {
			if v > 0 {
				d.slots = append(d.slots, slotAmt{slot: int32(s), amt: v})
			}
		}
		st.slots.sortForSelection(d.slots)
	}
	withDevices := 0
	for _, k := range kernels {
		kr := &r.kernels[k]
		if kr.kind < 0 {
			continue
		}
		withDevices++
		i := slices.IndexFunc(d.devs, func(n devNeed) bool { return n.kind == kr.kind })
		if i < 0 {
			d.devs = append(d.devs, devNeed{kind: kr.kind})
			d.kinds = append(d.kinds, kr.kind)
			i = len(d.devs) - 1
		}
		if kr.whole {
			d.devs[i].whole += kr.amt
		} else {
			d.devs[i].shares += kr.amt
			d.devs[i].sharesMax = max(d.devs[i].sharesMax, kr.amt)
		}
	}
	d.simple = withDevices <= 1
	d.key = sl.kindsKey(d.kinds)
	if len(kernels) > 1 {
		d.assign = slices.Clone(kernels)
		slices.SortStableFunc(d.assign, func(a, b int32) int {
			ka, kb := &r.kernels[a], &r.kernels[b]
			if ka.whole != kb.whole {
				if ka.whole {
					return -1
				}
				return 1
			}
			return cmp.Compare(kb.amt, ka.amt)
		})
	}
	return d
}

// kindsKey names a sorted set of device kinds, for maps.
func (sl *slabs) kindsKey(kinds []int32) string {
	slices.Sort(kinds)
	switch len(kinds) {
	case 0:
		return ""
	case 1:
		if k, ok := sl.kinds[kinds[0]]; ok {
			return k
		}
	}
	var b []byte
	for _, k := range kinds {
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, ',')
	}
	key := string(b)
	if len(kinds) == 1 {
		sl.kinds[kinds[0]] = key
	}
	return key
}

// validate checks what placement relies on: a known cluster mode and
// priority, at least one kernel, known slots, no negative amount, at most
// one accelerator slot per kernel (cuda.device, cuda.shares and MIG
// profiles are mutually exclusive), cuda.shares in steps of 0.01, whole
// numbers of devices, a MIG profile exactly 1. It returns what is wrong,
// or "".
func validate(s *Session) string {
	switch s.ClusterMode {
	case "", domain.ClusterSingleNode, domain.ClusterMultiNode:
	default:
		return fmt.Sprintf("unknown cluster mode %q", s.ClusterMode)
	}
	if s.Priority < 0 || s.Priority > domain.MaxPriority {
		return fmt.Sprintf("priority %d is not between 0 and %d", s.Priority, domain.MaxPriority)
	}
	if len(s.Kernels) == 0 {
		return "no kernels"
	}
	for i, k := range s.Kernels {
		if msg := validateSlots(k.Slots); msg != "" {
			return fmt.Sprintf("kernel %d: %s", i, msg)
		}
	}
	return ""
}

// validateSlots returns the first problem of slots in name order, "" for
// none; the common case (no problem) takes no sorting.
func validateSlots(slots domain.Slots) string {
	accels, asks := 0, false
	for name, v := range slots {
		if slotProblem(name, v) != "" {
			return sortedProblem(slots)
		}
		if v > 0 {
			asks = true
			if domain.IsAccelerator(name) {
				accels++
			}
		}
	}
	if accels > 1 || !asks {
		return sortedProblem(slots)
	}
	return ""
}

func slotProblem(name domain.SlotName, v domain.Quantity) string {
	t, known := domain.SlotTypeOf(name)
	switch {
	case !known:
		return fmt.Sprintf("unknown slot %s", name)
	case v < 0:
		return fmt.Sprintf("%s: negative amount %s", name, v)
	case v == 0:
		return ""
	case name == domain.SlotCUDAShares && int64(v)%shareStep != 0:
		return fmt.Sprintf("%s: %s is not a multiple of 0.01", name, v)
	case t == domain.SlotUnique && v != domain.Units(1):
		return fmt.Sprintf("%s: a MIG profile takes exactly 1, not %s", name, v)
	case domain.IsAccelerator(name) && name != domain.SlotCUDAShares && !v.IsWhole():
		return fmt.Sprintf("%s: %s is not a whole number of devices", name, v)
	}
	return ""
}

func sortedProblem(slots domain.Slots) string {
	var accels []string
	asks := false
	for _, name := range slots.Names() {
		v := slots[name]
		if msg := slotProblem(name, v); msg != "" {
			return msg
		}
		if v > 0 {
			asks = true
			if domain.IsAccelerator(name) {
				accels = append(accels, string(name))
			}
		}
	}
	if len(accels) > 1 {
		return fmt.Sprintf("%s are mutually exclusive", strings.Join(accels, ", "))
	}
	if !asks {
		return "requests nothing"
	}
	return ""
}
