// Package benchshape is the shape of the scheduling benchmarks' queue,
// shared by the pure placement benchmark (domain/placement) and the end
// to end one (cmd/cairn-bench/internal/schedbench), so that both measure the
// same mix of requests.
package benchshape

import (
	"fmt"
	"math/rand/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// MIGProfiles is how each MIG-enabled GPU of the benchmark fleets is
// split.
var MIGProfiles = []string{"3g.40gb", "2g.20gb", "2g.20gb"}

// Request is one pending session of the benchmark queue.
type Request struct {
	// Slots is what each kernel asks: 1 to 8 cpus and 1 to 64 GiB, and
	// 15% whole GPUs (1, 2, 4 or 8), 42% fractional shares (0.1 to 0.9,
	// a quarter of them 1.5, 2 or 3), 33% a MIG profile, 10% no GPU.
	Slots domain.Slots
	// Kernels is 1, or 2 to 4 for one session in ten.
	Kernels int
	// MultiNode is set for a third of the sessions with several kernels.
	MultiNode bool
	// AccessKey is one of 200 keys; Priority is 10, or 20 for a quarter.
	AccessKey string
	Priority  int
}

// CPUMem is cpus and GiB of memory as slots.
func CPUMem(cpu, memGiB int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: domain.Units(memGiB << 30)}
}

// NewRequest draws one request from rng.
func NewRequest(rng *rand.Rand) Request {
	slots := CPUMem(int64(1+rng.IntN(8)), int64(1+rng.IntN(64)))
	switch p := rng.IntN(100); {
	case p < 15:
		slots[domain.SlotCUDADevice] = domain.Units([]int64{1, 1, 1, 2, 2, 4, 8}[rng.IntN(7)])
	case p < 57:
		slots[domain.SlotCUDAShares] = domain.Quantity(50 * (2 + rng.IntN(17)))
		if rng.IntN(4) == 0 {
			slots[domain.SlotCUDAShares] = []domain.Quantity{1500, 2000, 3000}[rng.IntN(3)]
		}
	case p < 90:
		slots[placement.MIGSlot(MIGProfiles[rng.IntN(len(MIGProfiles))])] = domain.Units(1)
	}
	r := Request{Slots: slots, Kernels: 1, AccessKey: fmt.Sprintf("AK%03d", rng.IntN(200)), Priority: []int{10, 10, 10, 20}[rng.IntN(4)]}
	if rng.IntN(10) == 0 {
		r.Kernels = 2 + rng.IntN(3)
		r.MultiNode = rng.IntN(3) == 0
	}
	return r
}
