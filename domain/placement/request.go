package placement

import (
	"cmp"
	"fmt"
	"slices"

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
