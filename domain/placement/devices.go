package placement

import "github.com/cairnhq/cairn/domain"

const (
	// shareStep is the granularity of cuda.shares: 0.01 of a device.
	shareStep = domain.QuantityScale / 100
	// oneDevice is the amount a placement records for a whole device or a
	// MIG device, whatever its share capacity.
	oneDevice = int64(domain.DeviceShareCapacity)
)

func resize(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}

// kindRange returns the agent's devices of a kind, or nil.
func (a *agent) kindRange(kind int32) *kindRange {
	for i := range a.kinds {
		if a.kinds[i].kind == kind {
			return &a.kinds[i]
		}
	}
	return nil
}

// fitsSlots reports whether every slot of need fits in what is free.
func (a *agent) fitsSlots(need []slotAmt) bool {
	for _, sa := range need {
		if a.free[sa.slot] < sa.amt {
			return false
		}
	}
	return true
}

// fitsDevices reports whether the agent's devices can serve d. Counts
// decide for whole devices, one device's free share for a single share
// request that one device must hold; anything else tries the assignment.
func (st *state) fitsDevices(a *agent, r *request, d *demand, frag bool) bool {
	if len(d.devs) == 0 {
		return true
	}
	for i := range d.devs {
		n := &d.devs[i]
		kr := a.kindRange(n.kind)
		if kr == nil || int64(kr.whole) < n.whole {
			return false
		}
		if n.shares == 0 || !d.simple {
			continue
		}
		if n.shares > kr.maxCap {
			return st.sharesFit(kr, n.shares, frag)
		}
		if kr.maxFree < n.shares {
			return false
		}
	}
	if d.simple {
		return true
	}
	return st.assign(a, r, d, frag, false)
}

// sharesFit reports, without assigning, whether assignShares would place
// amt (more than one device holds) on the range: some near-equal split
// into n parts (extra of them one step larger) fits when at least extra
// devices hold a large part and n a small one, which is what the best-fit
// assignment of the parts, largest first, needs; any split fits when the
// free shares (in whole steps) add up.
func (st *state) sharesFit(kr *kindRange, amt int64, frag bool) bool {
	usable := 0
	var sum int64
	for i := kr.lo; i < kr.hi; i++ {
		if f := st.devs[i].free; f >= shareStep {
			usable++
			sum += f - f%shareStep
		}
	}
	steps := amt / shareStep
	for n := int((amt + kr.maxCap - 1) / kr.maxCap); n <= usable && int64(n) <= steps; n++ {
		small, extra := steps/int64(n)*shareStep, steps%int64(n)
		var holdLarge, holdSmall int64
		for i := kr.lo; i < kr.hi; i++ {
			f := st.devs[i].free
			if f >= small+shareStep {
				holdLarge++
			}
			if f >= small {
				holdSmall++
			}
		}
		if holdLarge >= extra && holdSmall >= int64(n) {
			return true
		}
	}
	return frag && sum >= amt
}

// assign gives d's kernels concrete devices on a, on a scratch copy of
// the agent's free shares, in d.assign order, and reports whether every
// kernel got its devices. With emit, the parts are left in
// st.scratch.parts.
func (st *state) assign(a *agent, r *request, d *demand, frag bool, emit bool) bool {
	sc := &st.scratch
	sc.parts = sc.parts[:0]
	lo := a.devLo
	hi := lo
	if n := len(a.kinds); n > 0 {
		hi = a.kinds[n-1].hi
	}
	sc.free = sc.free[:0]
	for i := lo; i < hi; i++ {
		sc.free = append(sc.free, st.devs[i].free)
	}
	for _, k := range d.assign {
		kr := &r.kernels[k]
		if kr.kind < 0 {
			continue
		}
		rng := a.kindRange(kr.kind)
		if rng == nil {
			return false
		}
		var ok bool
		if kr.whole {
			ok = st.assignWhole(rng, lo, k, kr.amt)
		} else {
			ok = st.assignShares(rng, lo, k, kr.amt, frag)
		}
		if !ok {
			return false
		}
	}
	return true
}

// assignWhole takes n devices with nothing allocated, by id.
func (st *state) assignWhole(rng *kindRange, base, kernel int32, n int64) bool {
	sc := &st.scratch
	for i := rng.lo; i < rng.hi && n > 0; i++ {
		if f := &sc.free[i-base]; *f == st.devs[i].cap {
			sc.parts = append(sc.parts, part{kernel: kernel, device: i, amt: oneDevice})
			*f = 0
			n--
		}
	}
	return n == 0
}

// assignShares places amt shares:
//   - at most one device's capacity: on one device, the one with the
//     least free share that holds it (best fit: whole devices stay whole
//     and large holes stay large), the smaller id on a tie;
//   - more: in near-equal parts (steps of 0.01) over the fewest devices
//     that hold them, each part best fit, largest part first;
//   - failing that, when the group allows fragmentation: any parts, the
//     fewest devices first (the largest free shares), the last part best
//     fit.
func (st *state) assignShares(rng *kindRange, base, kernel int32, amt int64, frag bool) bool {
	sc := &st.scratch
	free := sc.free[rng.lo-base : rng.hi-base]
	if amt <= rng.maxCap {
		best := bestFit(free, nil, amt)
		if best < 0 {
			return false
		}
		free[best] -= amt
		sc.parts = append(sc.parts, part{kernel: kernel, device: rng.lo + int32(best), amt: amt})
		return true
	}
	usable := 0
	for _, f := range free {
		if f >= shareStep {
			usable++
		}
	}
	sc.used = resize(sc.used, len(free))
	for n := int((amt + rng.maxCap - 1) / rng.maxCap); n <= usable && int64(n)*shareStep <= amt; n++ {
		if st.fitParts(free, rng.lo, kernel, amt, n) {
			return true
		}
	}
	if frag {
		return st.fragment(free, rng.lo, kernel, amt)
	}
	return false
}

// bestFit is the index of the device with the least free share that
// holds amt (skipping used ones), or -1.
func bestFit(free []int64, used []bool, amt int64) int {
	best := -1
	for i, f := range free {
		if f >= amt && (used == nil || !used[i]) && (best < 0 || f < free[best]) {
			best = i
		}
	}
	return best
}

// fitParts splits amt into n near-equal parts (largest first) and puts
// each on its best-fitting unused device; all or nothing.
func (st *state) fitParts(free []int64, lo, kernel int32, amt int64, n int) bool {
	sc := &st.scratch
	clear(sc.used)
	steps := amt / shareStep
	base, extra := steps/int64(n), steps%int64(n)
	start := len(sc.parts)
	for i := range n {
		p := base
		if int64(i) < extra {
			p++
		}
		p *= shareStep
		best := bestFit(free, sc.used, p)
		if best < 0 {
			for _, q := range sc.parts[start:] {
				free[q.device-lo] += q.amt
			}
			sc.parts = sc.parts[:start]
			return false
		}
		sc.used[best] = true
		free[best] -= p
		sc.parts = append(sc.parts, part{kernel: kernel, device: lo + int32(best), amt: p})
	}
	return true
}

// fragment takes the largest free shares until one device holds the
// rest, which goes on its best fit; all or nothing.
func (st *state) fragment(free []int64, lo, kernel int32, amt int64) bool {
	sc := &st.scratch
	clear(sc.used)
	start := len(sc.parts)
	for rest := amt; rest > 0; {
		if best := bestFit(free, sc.used, rest); best >= 0 {
			free[best] -= rest
			sc.parts = append(sc.parts, part{kernel: kernel, device: lo + int32(best), amt: rest})
			return true
		}
		big := -1
		for i, f := range free {
			if !sc.used[i] && f >= shareStep && (big < 0 || f > free[big]) {
				big = i
			}
		}
		if big < 0 {
			break
		}
		take := free[big] - free[big]%shareStep
		sc.used[big] = true
		free[big] -= take
		rest -= take
		sc.parts = append(sc.parts, part{kernel: kernel, device: lo + int32(big), amt: take})
	}
	for _, q := range sc.parts[start:] {
		free[q.device-lo] += q.amt
	}
	sc.parts = sc.parts[:start]
	return false
}
