package placement

import (
	"cmp"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// take subtracts d's kernels (their slots, and the device parts the last
// emitting assign left in st.scratch.parts) from agent ai, recording each
// change in the journal during a trial, and returns the kernels'
// placements.
func (st *state) take(ai int32, r *request, d *demand, out []domain.KernelPlacement) {
	a := &st.agents[ai]
	for _, k := range d.kernels {
		for _, sa := range r.kernels[k].slots {
			a.free[sa.slot] -= sa.amt
			if st.trial {
				st.journal = append(st.journal, undo{agent: ai, slot: sa.slot, amt: sa.amt})
			}
		}
	}
	for _, p := range st.scratch.parts {
		dev := &st.devs[p.device]
		amt := p.amt
		if r.kernels[p.kernel].whole {
			amt = dev.free // the whole device
		}
		st.takeDevice(a, p.device, amt)
		if st.trial {
			st.journal = append(st.journal, undo{agent: ai, slot: -1, device: p.device, amt: amt})
		}
	}
	st.update(ai)
	for _, k := range d.kernels {
		kp := domain.KernelPlacement{KernelID: r.s.Kernels[k].ID, AgentID: a.id}
		for _, p := range st.scratch.parts {
			if p.kernel == k {
				kp.Devices = append(kp.Devices, domain.DeviceShare{DeviceID: st.devs[p.device].id, Amount: domain.Quantity(p.amt)})
			}
		}
		slices.SortFunc(kp.Devices, func(x, y domain.DeviceShare) int { return cmp.Compare(x.DeviceID, y.DeviceID) })
		out[k] = kp
	}
}

// takeDevice subtracts amt from a device's free share (a negative amt
// gives it back), keeping its kind's figures.
func (st *state) takeDevice(a *agent, di int32, amt int64) {
	dev := &st.devs[di]
	kr := a.kindRange(dev.kind)
	wasWhole := dev.free == dev.cap
	dev.free -= amt
	kr.sumFree -= amt
	if isWhole := dev.free == dev.cap; wasWhole != isWhole {
		if isWhole {
			kr.whole++
		} else {
			kr.whole--
		}
	}
	kr.maxFree = 0
	for i := kr.lo; i < kr.hi; i++ {
		kr.maxFree = max(kr.maxFree, st.devs[i].free)
	}
}

// beginTrial starts recording changes; rollback undoes them, commit keeps
// them.
func (st *state) beginTrial() {
	st.trial = true
	st.journal = st.journal[:0]
}

func (st *state) rollback() {
	for i := len(st.journal) - 1; i >= 0; i-- {
		u := st.journal[i]
		a := &st.agents[u.agent]
		if u.slot >= 0 {
			a.free[u.slot] += u.amt
		} else {
			st.takeDevice(a, u.device, -u.amt)
		}
		// Re-rank an agent once its run of changes is undone: a ranking
		// moves one agent at a time, the others must be in place.
		if i == 0 || st.journal[i-1].agent != u.agent {
			st.update(u.agent)
		}
	}
	st.trial = false
	st.journal = st.journal[:0]
}

func (st *state) commit() {
	st.trial = false
	st.journal = st.journal[:0]
}
