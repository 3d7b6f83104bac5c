package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// explain lists every check that failed for a session no node took, as
// stable sentences: they name slots and requested amounts, never the free
// amounts of the moment, so that a session waiting for the same reasons
// records them once (UpdatePendingSession appends only when they change).
//
// A single-node session is checked as one demand (the sum of its kernels'
// slots, each kernel's devices on one node); a multi-node session kernel
// by kernel, reporting the kernels no node can take even when the cluster
// is empty of the session's other kernels.
func explain(r Request, nodes []*node) []string {
	if len(nodes) == 0 {
		return []string{"no agent is registered and alive"}
	}
	if r.ClusterMode == domain.ClusterMultiNode {
		var out []string
		seen := map[string]bool{}
		for _, k := range r.Kernels {
			for _, d := range explainDemand([]KernelRequest{k}, nodes) {
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
				}
			}
		}
		if len(out) == 0 {
			out = []string{fmt.Sprintf("not enough agents with free capacity for all %d kernels", len(r.Kernels))}
		}
		return out
	}
	out := explainDemand(r.Kernels, nodes)
	if len(out) == 0 {
		// Each check passed alone; only placing the kernels one by one failed.
		out = []string{fmt.Sprintf("no agent has free capacity for all %d kernels at once", len(r.Kernels))}
	}
	return out
}

// explainDemand checks kernels that must share one node: slot by slot
// against capacity and free amounts, the devices, and then all together.
func explainDemand(kernels []KernelRequest, nodes []*node) []string {
	total := domain.Slots{}
	for _, k := range kernels {
		total = total.Add(k.Slots)
	}
	var out []string
	slotsAlone := true
	for _, name := range total.Names() {
		want := total[name]
		if want <= 0 {
			continue
		}
		inCapacity, free := false, false
		for _, n := range nodes {
			inCapacity = inCapacity || n.capacity[name] >= want
			free = free || n.free[name] >= want
		}
		switch {
		case !inCapacity:
			out = append(out, fmt.Sprintf("%s: requested %s exceeds the capacity of every agent", name, amount(name, want)))
			slotsAlone = false
		case !free:
			out = append(out, fmt.Sprintf("%s: requested %s, no agent has that much free", name, amount(name, want)))
			slotsAlone = false
		}
	}
	if d, ok := explainDevices(kernels, nodes); !ok {
		out = append(out, d)
		slotsAlone = false
	}
	if slotsAlone && !anyNodeTakes(kernels, nodes) {
		out = append(out, fmt.Sprintf("no agent has %s free at once", joinNames(total.Names())))
	}
	return out
}

// explainDevices checks whether any node's devices alone could serve the
// kernels' accelerator requests, and says which request none can.
func explainDevices(kernels []KernelRequest, nodes []*node) (string, bool) {
	var slot domain.SlotName
	for _, k := range kernels {
		if s, _, ok := acceleratorOf(k.Slots); ok {
			slot = s
		}
	}
	if slot == "" {
		return "", true
	}
	for _, n := range nodes {
		if devicesServe(kernels, n) {
			return "", true
		}
	}
	var want domain.Quantity
	for _, k := range kernels {
		want += k.Slots[slot]
	}
	switch {
	case slot == domain.SlotCUDAShares && len(kernels) == 1 && want <= domain.DeviceShareCapacity:
		return fmt.Sprintf("%s: no GPU has %s free on one device", slot, want), false
	case slot == domain.SlotCUDAShares:
		return fmt.Sprintf("%s: no agent has GPUs with %s free in total", slot, want), false
	}
	return fmt.Sprintf("%s: no agent has %s such devices entirely free", slot, want), false
}

// devicesServe reports whether n's devices alone could serve every
// kernel's accelerator request at once.
func devicesServe(kernels []KernelRequest, n *node) bool {
	if len(kernels) == 1 {
		_, ok := assignDevices(kernels[0].Slots, n.devices)
		return ok
	}
	trial := &node{devices: slices.Clone(n.devices)}
	for _, k := range kernels {
		devices, ok := assignDevices(k.Slots, trial.devices)
		if !ok {
			return false
		}
		trial.take(nil, devices)
	}
	return true
}

func anyNodeTakes(kernels []KernelRequest, nodes []*node) bool {
	for _, n := range nodes {
		if len(kernels) == 1 {
			if _, ok := n.fits(kernels[0].Slots); ok {
				return true
			}
			continue
		}
		if _, ok := n.clone().takeAll(kernels); ok {
			return true
		}
	}
	return false
}

// amount renders a quantity for people: bytes with a binary suffix.
func amount(name domain.SlotName, q domain.Quantity) string {
	if t, _ := domain.SlotTypeOf(name); t != domain.SlotBytes || !q.IsWhole() {
		return q.String()
	}
	b := q.Whole()
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"P", 1 << 50}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size && b%u.size == 0 {
			return fmt.Sprintf("%d%s", b/u.size, u.suffix)
		}
	}
	return fmt.Sprintf("%d", b)
}

func joinNames(names []domain.SlotName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
