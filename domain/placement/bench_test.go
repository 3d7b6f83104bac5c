package placement_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/placement/benchshape"
)

// fleet is the benchmark's cluster: agents × 8 GPUs, 128 cpus and 1 TiB
// each; a quarter serve whole GPUs, 60% fractional shares (some already
// partly used), 15% have their GPUs in MIG mode (3g.40gb + 2 × 2g.20gb
// per GPU).
func fleet(agents int, rng *rand.Rand) []placement.Agent {
	out := make([]placement.Agent, 0, agents)
	for i := range agents {
		a := placement.Agent{ID: fmt.Sprintf("node-%04d", i), Architecture: "x86_64", ResourceGroup: "gpu", Schedulable: true,
			Capacity: cpuMem(128, 1024), Occupied: domain.Slots{}}
		switch kind := i % 20; {
		case kind < 5:
			a.Capacity[domain.SlotCUDADevice] = domain.Units(8)
			for g := range 8 {
				a.Devices = append(a.Devices, placement.GPU(fmt.Sprintf("GPU-%04d-%d", i, g), 0, 0))
			}
		case kind < 17:
			a.Capacity[domain.SlotCUDAShares] = domain.Units(8)
			for g := range 8 {
				used := domain.Quantity(rng.IntN(3) * 250) // 0, 0.25 or 0.5 already taken
				a.Devices = append(a.Devices, placement.GPU(fmt.Sprintf("GPU-%04d-%d", i, g), 0, used))
				a.Occupied[domain.SlotCUDAShares] += used
			}
		default:
			for g := range 8 {
				for j, p := range benchshape.MIGProfiles {
					a.Capacity[placement.MIGSlot(p)] += domain.Units(1)
					a.Devices = append(a.Devices, placement.MIG(fmt.Sprintf("MIG-%04d-%d-%d", i, g, j), p, false))
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// queue is the benchmark's pending sessions (benchshape.NewRequest),
// asking more of every kind of GPU than the fleet has. Every one has
// failed a try before, so fifo never blocks: one round places all that
// can be.
func queue(n int, rng *rand.Rand) []placement.Session {
	out := make([]placement.Session, 0, n)
	for i := range n {
		r := benchshape.NewRequest(rng)
		s := sess(i+1, r.Slots, r.Kernels)
		s.ResourceGroup, s.Tries = "gpu", 1
		s.AccessKey, s.Priority = r.AccessKey, r.Priority
		if r.MultiNode {
			s.ClusterMode = domain.ClusterMultiNode
		}
		out = append(out, s)
	}
	return out
}

// BenchmarkPlace is one round of 10,000 pending sessions over 1,000
// agents × 8 GPUs, per selector. It reports placements/s, the memory of
// the round's state per agent and per session, and the packing quality:
// the share of GPU capacity in use once the queue can no longer be placed,
// next to a first-fit baseline's on the same input, and their ratio.
func BenchmarkPlace(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	agents := fleet(1000, rng)
	sessions := queue(10000, rng)
	perAgent, perSession := stateBytes(b, agents, sessions)
	for _, sel := range []placement.Selector{placement.SelectorConcentrated, placement.SelectorDispersed, placement.SelectorRoundRobin} {
		b.Run(string(sel), func(b *testing.B) {
			in := placement.Input{Now: t0.Add(24 * 3600e9), Sessions: sessions, Agents: agents, Groups: []placement.ResourceGroup{
				{Name: "gpu", Selector: sel, SkipAfterTries: 1},
			}}
			var res placement.Result
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if res, err = placement.Place(in); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			placed := len(res.Placed)
			b.ReportMetric(float64(placed)*float64(b.N)/b.Elapsed().Seconds(), "placements/s")
			b.ReportMetric(float64(placed), "placed")
			b.ReportMetric(perAgent, "bytes/agent")
			b.ReportMetric(perSession, "bytes/session")
			ours := gpuUse(agents, takenBy(res))
			ff := firstFit(in)
			base := gpuUse(agents, ff.taken)
			b.ReportMetric(ours, "gpu-used")
			b.ReportMetric(base, "gpu-used-firstfit")
			b.ReportMetric(ours/base, "packing-ratio")
		})
	}
}

// stateBytes measures the heap the round's state keeps: for the agents
// alone, then for the sessions on top.
func stateBytes(b *testing.B, agents []placement.Agent, sessions []placement.Session) (perAgent, perSession float64) {
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	h0 := heap()
	onlyAgents, err := placement.StateOf(placement.Input{Agents: agents, Groups: []placement.ResourceGroup{{Name: "gpu"}}})
	if err != nil {
		b.Fatal(err)
	}
	h1 := heap()
	both, err := placement.StateOf(placement.Input{Agents: agents, Sessions: sessions, Groups: []placement.ResourceGroup{{Name: "gpu"}}})
	if err != nil {
		b.Fatal(err)
	}
	h2 := heap()
	runtime.KeepAlive(onlyAgents)
	runtime.KeepAlive(both)
	a := float64(h1 - h0)
	return a / float64(len(agents)), (float64(h2-h1) - a) / float64(len(sessions))
}
