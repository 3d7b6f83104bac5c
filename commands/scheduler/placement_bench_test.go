package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
)

// BenchmarkPlace is one round over a large queue: 5000 pending sessions
// (a third asking for fractional GPUs) and 200 agents with 8 GPUs each;
// about 3000 are placed, the others are explained.
func BenchmarkPlace(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var nodes []scheduler.Node
	for i := range 200 {
		nodes = append(nodes, gpuNode(fmt.Sprintf("a%03d", i), 64, 512, "1", "1", "1", "1", "1", "1", "1", "1"))
	}
	var requests []scheduler.Request
	for i := range 5000 {
		slots := cpuMem(int64(1+rng.IntN(6)), int64(1+rng.IntN(16)))
		if i%3 == 0 {
			slots[domain.SlotCUDAShares] = domain.Quantity(int64(10+rng.IntN(90)) * 10)
		}
		requests = append(requests, req(i+1, slots, 1))
	}
	b.ReportAllocs()
	for b.Loop() {
		plan := scheduler.Place(requests, nodes)
		if len(plan.Placed) == 0 || len(plan.Unplaced) == 0 {
			b.Fatalf("%d placed, %d unplaced", len(plan.Placed), len(plan.Unplaced))
		}
	}
}
