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
	st.pools[a.pool].dirty = true
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
// gives it back), keeping its kind's count of entirely free devices.
func (st *state) takeDevice(a *agent, di int32, amt int64) {
	dev := &st.devs[di]
	wasWhole := dev.free == dev.cap
	dev.free -= amt
	if isWhole := dev.free == dev.cap; wasWhole != isWhole {
		kr := a.kindRange(dev.kind)
		if isWhole {
			kr.whole++
		} else {
			kr.whole--
		}
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
	}
	st.trial = false
	st.journal = st.journal[:0]
}

func (st *state) commit() {
	st.trial = false
	st.journal = st.journal[:0]
}
