package placement

import (
	"cmp"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// slotTable numbers the slots one round mentions, in name order, so that
// amounts are dense vectors indexed by slot (no maps while placing).
type slotTable struct {
	names []domain.SlotName
	index map[domain.SlotName]int32
	// rank orders a request's slots for the selectors: the accelerator
	// first, then cpu, mem, and the others by name.
	rank []int8
	// cudaDevice and cudaShares are always present.
	cudaDevice, cudaShares int32
}

func newSlotTable(names map[domain.SlotName]bool) slotTable {
	names[domain.SlotCUDADevice] = true
	names[domain.SlotCUDAShares] = true
	t := slotTable{index: make(map[domain.SlotName]int32, len(names))}
	for n := range names {
		t.names = append(t.names, n)
	}
	slices.Sort(t.names)
	t.rank = make([]int8, len(t.names))
	for i, n := range t.names {
		t.index[n] = int32(i)
		switch {
		case domain.IsAccelerator(n):
			t.rank[i] = 0
		case n == domain.SlotCPU:
			t.rank[i] = 1
		case n == domain.SlotMem:
			t.rank[i] = 2
		default:
			t.rank[i] = 3
		}
	}
	t.cudaDevice, t.cudaShares = t.index[domain.SlotCUDADevice], t.index[domain.SlotCUDAShares]
	return t
}

func (t *slotTable) size() int { return len(t.names) }

// dense writes s into v (len size()), slot by slot.
func (t *slotTable) dense(s domain.Slots, v []int64) {
	for name, q := range s {
		v[t.index[name]] += int64(q)
	}
}

// slotAmt is one requested slot and its amount.
type slotAmt struct {
	slot int32
	amt  int64
}

func (t *slotTable) sortForSelection(v []slotAmt) {
	slices.SortFunc(v, func(a, b slotAmt) int {
		if c := cmp.Compare(t.rank[a.slot], t.rank[b.slot]); c != 0 {
			return c
		}
		return cmp.Compare(a.slot, b.slot)
	})
}

// deviceKind is the kind of device that serves an accelerator slot:
// cuda.shares are taken from whole GPUs.
func (t *slotTable) deviceKind(slot int32) int32 {
	if slot == t.cudaShares {
		return t.cudaDevice
	}
	return slot
}
