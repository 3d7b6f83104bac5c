package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

// TestSharesFitAgreesWithAssignment: the selectors decide with sharesFit
// (counts, no writes) whether a split request fits an agent; the
// assignment must then succeed, and fail whenever sharesFit says no.
func TestSharesFitAgreesWithAssignment(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 3000 {
		a := Agent{ID: "a", Schedulable: true, Capacity: domain.Slots{domain.SlotCPU: domain.Units(1)}}
		for j := range 1 + rng.IntN(8) {
			capacity := domain.Quantity([]int64{0, 0, 500, 2000}[rng.IntN(4)])
			used := domain.Quantity(rng.IntN(1001))
			a.Devices = append(a.Devices, GPU(fmt.Sprintf("GPU-%d", j), capacity, used))
		}
		st, err := compile(&Input{Agents: []Agent{a}})
		if err != nil {
			t.Fatal(err)
		}
		ag := &st.agents[0]
		kr := &ag.kinds[0]
		amt := int64(1+rng.IntN(400)) * shareStep
		if rng.IntN(4) == 0 { // exactly what is free, in whole steps
			amt = 0
			for d := kr.lo; d < kr.hi; d++ {
				amt += st.devs[d].free - st.devs[d].free%shareStep
			}
		}
		if amt <= kr.maxCap {
			continue // one device: not a split
		}
		frag := rng.IntN(2) == 0
		want := st.sharesFit(kr, amt, frag)
		st.scratch.free = st.scratch.free[:0]
		for d := kr.lo; d < kr.hi; d++ {
			st.scratch.free = append(st.scratch.free, st.devs[d].free)
		}
		st.scratch.parts = st.scratch.parts[:0]
		got := st.assignShares(kr, ag.devLo, 0, amt, frag)
		if got != want {
			t.Fatalf("case %d: %s over %v (frag %v): assignment %v, sharesFit %v", i, domain.Quantity(amt), st.devs, frag, got, want)
		}
		var sum int64
		for _, p := range st.scratch.parts {
			sum += p.amt
		}
		if got && sum != amt {
			t.Fatalf("case %d: parts sum to %d, want %d", i, sum, amt)
		}
	}
}
