package placement_test

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// firstFit is the baseline placement the benchmark compares packing
// with: sessions in priority then FIFO order, each kernel (a single-node
// session's kernels together) on the first agent by id where its slots
// fit, each accelerator request on the first devices with room (shares
// on the first device that holds them, split in near-equal parts over the
// fewest devices when more than one device). No checks, no blocking.
type firstFitResult struct {
	placed int
	// taken is what was placed on each device.
	taken map[string]domain.Quantity
}

type ffAgent struct {
	src  *placement.Agent
	free domain.Slots
	dev  []ffDevice
}

type ffDevice struct {
	id   string
	kind domain.SlotName
	cap  domain.Quantity
	free domain.Quantity
}

func firstFit(in placement.Input) firstFitResult {
	agents := make([]*ffAgent, 0, len(in.Agents))
	for i := range in.Agents {
		a := &in.Agents[i]
		if !a.Schedulable {
			continue
		}
		fa := &ffAgent{src: a, free: a.Capacity.Sub(a.Occupied)}
		for _, d := range a.Devices {
			c := d.ShareCapacity
			if c == 0 {
				c = domain.DeviceShareCapacity
			}
			fa.dev = append(fa.dev, ffDevice{id: d.ID, kind: d.Kind, cap: c, free: c - d.Used})
		}
		slices.SortFunc(fa.dev, func(x, y ffDevice) int { return cmp.Compare(x.id, y.id) })
		agents = append(agents, fa)
	}
	slices.SortFunc(agents, func(x, y *ffAgent) int { return cmp.Compare(x.src.ID, y.src.ID) })
	sessions := slices.Clone(in.Sessions)
	slices.SortStableFunc(sessions, func(x, y placement.Session) int {
		if c := cmp.Compare(y.Priority, x.Priority); c != 0 {
			return c
		}
		return x.EnqueuedAt.Compare(y.EnqueuedAt)
	})
	res := firstFitResult{taken: map[string]domain.Quantity{}}
	for _, s := range sessions {
		groups := [][]placement.Kernel{s.Kernels}
		if s.ClusterMode == domain.ClusterMultiNode {
			groups = nil
			for _, k := range s.Kernels {
				groups = append(groups, []placement.Kernel{k})
			}
		}
		// Work on copies; keep them only if every group found an agent.
		trial := map[*ffAgent]*ffAgent{}
		ok := true
		for _, ks := range groups {
			found := false
			for _, orig := range agents {
				a := trial[orig]
				if a == nil {
					a = &ffAgent{src: orig.src, free: orig.free.Clone(), dev: slices.Clone(orig.dev)}
				}
				if a.takeAll(ks) {
					trial[orig] = a
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		res.placed++
		for orig, a := range trial {
			for i := range a.dev {
				if d := orig.dev[i].free - a.dev[i].free; d > 0 {
					res.taken[a.dev[i].id] += d
				}
			}
			*orig = *a
		}
	}
	return res
}

func (a *ffAgent) takeAll(ks []placement.Kernel) bool {
	total := domain.Slots{}
	for _, k := range ks {
		total = total.Add(k.Slots)
	}
	if !total.FitsIn(a.free) {
		return false
	}
	dev := slices.Clone(a.dev)
	for _, k := range ks {
		for _, name := range k.Slots.Names() {
			v := k.Slots[name]
			if v == 0 || !domain.IsAccelerator(name) {
				continue
			}
			if !takeDevices(dev, name, v) {
				return false
			}
		}
	}
	a.free = a.free.Sub(total)
	a.dev = dev
	return true
}

func takeDevices(dev []ffDevice, slot domain.SlotName, v domain.Quantity) bool {
	if slot != domain.SlotCUDAShares {
		n := v.Whole()
		for i := range dev {
			if n > 0 && dev[i].kind == slot && dev[i].free == dev[i].cap {
				dev[i].free, n = 0, n-1
			}
		}
		return n == 0
	}
	parts := 1
	for ; domain.Quantity(parts)*domain.DeviceShareCapacity < v; parts++ {
	}
	each := v / domain.Quantity(parts)
	rest := v - each*domain.Quantity(parts)
	for p := range parts {
		want := each
		if p == 0 {
			want += rest
		}
		i := slices.IndexFunc(dev, func(d ffDevice) bool { return d.kind == domain.SlotCUDADevice && d.free >= want })
		if i < 0 {
			return false
		}
		dev[i].free -= want
	}
	return true
}

// gpuUse is the fraction of the GPU capacity in use: each whole GPU
// counts 1, each MIG device its profile's share of a GPU (3g → 3/7).
func gpuUse(agents []placement.Agent, taken map[string]domain.Quantity) float64 {
	var used, total float64
	for _, a := range agents {
		for _, d := range a.Devices {
			c := d.ShareCapacity
			if c == 0 {
				c = domain.DeviceShareCapacity
			}
			w := 1.0
			if d.Kind != domain.SlotCUDADevice {
				w = migWeight(d.Kind)
			}
			u := d.Used + taken[d.ID]
			if d.Kind != domain.SlotCUDADevice && u > 0 {
				u = c
			}
			used += w * float64(min(u, c)) / float64(c)
			total += w
		}
	}
	return used / total
}

func migWeight(kind domain.SlotName) float64 {
	s := strings.TrimPrefix(string(kind), "cuda.device:")
	g, _, _ := strings.Cut(s, "g.")
	n, err := strconv.Atoi(g)
	if err != nil {
		return 1
	}
	return float64(n) / 7
}

// takenBy is what a result placed on each device.
func takenBy(r placement.Result) map[string]domain.Quantity {
	out := map[string]domain.Quantity{}
	for _, p := range r.Placed {
		for _, k := range p.Kernels {
			for _, d := range k.Devices {
				out[d.DeviceID] += d.Amount
			}
		}
	}
	return out
}
