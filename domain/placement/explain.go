package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// explain records why no agent took r (it failed on the round's current
// state, outside any trial) and reports whether the request can never fit
// in its group as it is: no schedulable agent, none of its architecture,
// or more than any agent's capacity. A single-node session is explained
// as one demand (every kernel on one agent); a multi-node one kernel by
// kernel, each reason once.
//
// The sentences are stable: they name slots and requested amounts, never
// the free amounts of the moment, so a session waiting for the same
// reasons gets the same details round after round.
func (st *state) explain(g *group, r *request) (impossible bool) {
	arch := r.s.Architecture
	c := st.candidates(r.group, arch, &r.demands[0])
	switch {
	case c.noAgent:
		r.fail(Failure{Check: CheckCapacity, Subject: g.cfg.Name,
			Message: "no schedulable agent" + st.inGroup(g)})
		return true
	case len(c.all) == 0:
		r.fail(Failure{Check: CheckArchitecture, Subject: arch,
			Message: fmt.Sprintf("architecture: no schedulable agent of architecture %s%s", arch, st.inGroup(g))})
		return true
	}
	agg := st.combined(c.all)
	before := len(r.failures)
	for i := range r.demands {
		impossible = st.explainDemand(agg, r, &r.demands[i]) || impossible
	}
	if len(r.failures) == before {
		msg := fmt.Sprintf("not enough agents with free capacity for all %d kernels", len(r.kernels))
		if len(r.demands) == 1 {
			msg = fmt.Sprintf("no agent has %s free at once", joinSlots(st, r.demands[0].slots))
			if len(r.kernels) > 1 {
				msg = fmt.Sprintf("no agent has room for all %d kernels at once", len(r.kernels))
			}
		}
		r.fail(Failure{Check: CheckCapacity, Message: msg})
	}
	return impossible
}

// inGroup names the group in a sentence, when there are groups.
func (st *state) inGroup(g *group) string {
	if st.ungrouped {
		return ""
	}
	return fmt.Sprintf(" in resource group %q", g.cfg.Name)
}

// combined merges the pools' aggregates (exact: the trees are).
func (st *state) combined(pools []int32) *aggregates {
	agg := &st.scratch.agg
	if agg.maxCap == nil {
		*agg = newAggregates(st.slots.size())
	}
	agg.reset()
	for _, p := range pools {
		agg.mergeCapacity(&st.pools[p].capacity)
		agg.mergeFree(&st.pools[p], st.slots.size())
	}
	return agg
}

// explainDemand checks d slot by slot against every agent's capacity and
// free amounts, then its devices, and records each failed check once.
func (st *state) explainDemand(agg *aggregates, r *request, d *demand) (impossible bool) {
	short := map[int32]bool{}
	slots := slices.Clone(d.slots)
	slices.SortFunc(slots, func(a, b slotAmt) int { return int(a.slot - b.slot) })
	for _, sa := range slots {
		name := st.slots.names[sa.slot]
		switch {
		case agg.maxCap[sa.slot] < sa.amt:
			r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: requested %s exceeds the capacity of every agent", name, amount(name, sa.amt)))
			short[sa.slot], impossible = true, true
		case agg.maxFree[sa.slot] < sa.amt:
			r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: requested %s, no agent has that much free", name, amount(name, sa.amt)))
			short[sa.slot] = true
		}
	}
	for _, n := range d.devs {
		if n.whole > 0 {
			slot := r.slotOf(d, n.kind, true)
			name := st.slots.names[slot]
			switch {
			case short[slot]:
			case agg.wholeCap[n.kind] < n.whole:
				r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: no agent has %d such devices", name, n.whole))
				impossible = true
			case agg.wholeFree[n.kind] < n.whole:
				r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: no agent has %d such devices entirely free", name, n.whole))
			}
		}
		if n.shares > 0 && !short[st.slots.cudaShares] {
			name := domain.SlotCUDAShares
			want := domain.Quantity(n.shares)
			switch {
			case n.shares == n.sharesMax && n.shares <= agg.devCap[n.kind]:
				if agg.devFree[n.kind] < n.shares {
					r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: no GPU has %s free on one device", name, want))
				}
			case agg.sumCap[n.kind] < n.shares:
				r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: no agent has GPUs with %s shares in total", name, want))
				impossible = true
			case agg.sumFree[n.kind] < n.shares:
				r.failOnce(CheckCapacity, name, fmt.Sprintf("%s: no agent has GPUs with %s free in total", name, want))
			}
		}
	}
	return impossible
}

// slotOf is the slot a demand's kernels ask of a device kind.
func (r *request) slotOf(d *demand, kind int32, whole bool) int32 {
	for _, k := range d.kernels {
		if kr := &r.kernels[k]; kr.kind == kind && kr.whole == whole {
			return kr.slot
		}
	}
	return kind
}

func (r *request) fail(f Failure) { r.failures = append(r.failures, f) }

// failOnce records a capacity failure unless the same sentence is there
// (kernels of a multi-node session often share their reasons).
func (r *request) failOnce(check Check, slot domain.SlotName, msg string) {
	for _, f := range r.failures {
		if f.Message == msg {
			return
		}
	}
	r.fail(Failure{Check: check, Slot: slot, Message: msg})
}

func joinSlots(st *state, v []slotAmt) string {
	names := make([]string, len(v))
	for i, sa := range v {
		names[i] = string(st.slots.names[sa.slot])
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// amount renders an amount for people: bytes with a binary suffix.
func amount(name domain.SlotName, v int64) string {
	return domain.FormatAmount(name, domain.Quantity(v))
}
