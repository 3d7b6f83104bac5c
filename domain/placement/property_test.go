package placement_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

var profiles = []string{"1g.10gb", "2g.20gb", "3g.40gb"}

// randomInput draws a cluster, a queue and a tenancy view: agents with
// whole GPUs, shared GPUs (partly used), MIG devices or none, of two
// architectures, in up to three groups of random settings (or none),
// some unschedulable; sessions of every shape, single- or multi-node,
// with random priorities, tries, starts_at and dependencies; and limits
// on some keypairs, users, projects and domains.
func randomInput(rng *rand.Rand) placement.Input {
	in := placement.Input{Now: t0.Add(time.Hour)}
	groups := []string{"default"}
	if rng.IntN(3) > 0 {
		for i := range 1 + rng.IntN(3) {
			g := placement.ResourceGroup{
				Name:                         fmt.Sprintf("g%d", i),
				Order:                        []placement.Order{placement.OrderFIFO, placement.OrderLIFO, placement.OrderDRF}[rng.IntN(3)],
				Selector:                     []placement.Selector{placement.SelectorDispersed, placement.SelectorConcentrated, placement.SelectorRoundRobin, placement.SelectorLegacy}[rng.IntN(4)],
				AllowFractionalFragmentation: rng.IntN(2) == 0,
				SkipAfterTries:               rng.IntN(3),
				RoundRobinNext:               rng.IntN(10),
				Inactive:                     rng.IntN(10) == 0,
			}
			if rng.IntN(4) == 0 {
				g.Access = &placement.Access{Projects: []string{"p0"}, AccessKeys: []string{"AK1"}}
			}
			in.Groups = append(in.Groups, g)
		}
		groups = nil
		for _, g := range in.Groups {
			groups = append(groups, g.Name)
		}
	} else {
		in.Ungrouped = placement.ResourceGroup{Order: placement.OrderFIFO, SkipAfterTries: rng.IntN(2), AllowFractionalFragmentation: rng.IntN(2) == 0}
	}
	for i := range 1 + rng.IntN(8) {
		a := gpuAgent(fmt.Sprintf("a%d", i), int64(2+rng.IntN(30)), int64(4+rng.IntN(120)))
		a.ResourceGroup = groups[rng.IntN(len(groups))]
		a.Schedulable = rng.IntN(8) > 0
		if rng.IntN(4) == 0 {
			a.Architecture = "aarch64"
		}
		switch rng.IntN(4) {
		case 1: // GPUs, whole or shared
			n := 1 + rng.IntN(8)
			a.Capacity[domain.SlotCUDADevice] = domain.Units(int64(n))
			a.Capacity[domain.SlotCUDAShares] = domain.Units(int64(n))
			for j := range n {
				used := []string{"0", "0", "0", "0.5", "0.25", "1", "0.73"}[rng.IntN(7)]
				a.Devices = append(a.Devices, placement.GPU(fmt.Sprintf("GPU-%d-%d", i, j), 0, q(used)))
				a.Occupied = a.Occupied.Add(domain.Slots{domain.SlotCUDAShares: q(used)})
			}
		case 2: // MIG
			for j := range 1 + rng.IntN(7) {
				p := profiles[rng.IntN(len(profiles))]
				a.Capacity[placement.MIGSlot(p)] += domain.Units(1)
				a.Devices = append(a.Devices, placement.MIG(fmt.Sprintf("MIG-%d-%d", i, j), p, rng.IntN(4) == 0))
			}
		}
		a.Occupied = a.Occupied.Add(cpuMem(int64(rng.IntN(3)), int64(rng.IntN(4))))
		in.Agents = append(in.Agents, a)
	}
	for i := range 1 + rng.IntN(40) {
		slots := cpuMem(int64(1+rng.IntN(8)), int64(1+rng.IntN(48)))
		switch rng.IntN(5) {
		case 1:
			slots[domain.SlotCUDADevice] = domain.Units(int64(1 + rng.IntN(3)))
		case 2:
			slots[domain.SlotCUDAShares] = domain.Quantity(int64(1+rng.IntN(250)) * 10) // 0.01 .. 2.5
		case 3:
			slots[placement.MIGSlot(profiles[rng.IntN(len(profiles))])] = domain.Units(1)
		}
		s := sess(i+1, slots, 1+rng.IntN(3))
		if rng.IntN(3) == 0 {
			s.Kernels[0].Slots = cpuMem(1, 1) // kernels of different shapes
		}
		s.AccessKey = fmt.Sprintf("AK%d", rng.IntN(3))
		s.UserID = fmt.Sprintf("u%d", rng.IntN(3))
		s.Project = fmt.Sprintf("p%d", rng.IntN(2))
		s.ResourceGroup = groups[rng.IntN(len(groups))]
		s.Priority = rng.IntN(3) * 10
		s.Tries = rng.IntN(3)
		s.EnqueuedAt = t0.Add(time.Duration(rng.IntN(20)) * time.Second)
		if rng.IntN(2) == 0 {
			s.ClusterMode = domain.ClusterMultiNode
		}
		if rng.IntN(6) == 0 {
			s.Architecture = []string{"x86_64", "aarch64"}[rng.IntN(2)]
		}
		if rng.IntN(8) == 0 {
			s.StartsAt = t0.Add(time.Duration(rng.IntN(120)) * time.Minute)
		}
		if rng.IntN(8) == 0 {
			s.Dependencies = []placement.Dependency{{SessionID: uuid.New(), State: placement.DependencyState(rng.IntN(4))}}
		}
		in.Sessions = append(in.Sessions, s)
	}
	limit := func() placement.Usage {
		u := placement.Usage{Limits: cpuMem(int64(rng.IntN(100)), int64(rng.IntN(600))), Occupied: cpuMem(int64(rng.IntN(10)), int64(rng.IntN(20)))}
		if rng.IntN(2) == 0 {
			u.Limits[domain.SlotCUDAShares] = domain.Quantity(rng.IntN(10000))
			u.Limits[domain.SlotCUDADevice] = domain.Units(int64(rng.IntN(10)))
		}
		if rng.IntN(6) == 0 {
			u.Unspecified = placement.UnspecifiedLimited
		}
		return u
	}
	in.Quotas = placement.Quotas{
		Keypairs: map[string]placement.KeypairUsage{"AK1": {Usage: limit(), MaxConcurrentSessions: rng.IntN(6), ConcurrentSessions: rng.IntN(3)}},
		Users:    map[string]placement.Usage{"u2": limit()},
		Projects: map[string]placement.Usage{"p1": limit()},
		Domains:  map[string]placement.Usage{"d1": limit()},
	}
	if rng.IntN(2) == 0 {
		in.Quotas = placement.Quotas{}
	}
	return in
}

// TestPlaceInvariants draws many inputs and checks every invariant of the
// package documentation on each result (determinism, shuffled input
// included, is checked by place).
func TestPlaceInvariants(t *testing.T) {
	t.Parallel()
	for seed := range uint64(1500) {
		in := randomInput(rand.New(rand.NewPCG(seed, 7)))
		r := place(t, in)
		if err := checkResult(in, r); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestNothingLeftBehindFits: a single-kernel session that passed its
// checks, was tried and found no room cannot fit in what the round left
// (free amounts only fall within a round, and the single-kernel checks
// are exact).
func TestNothingLeftBehindFits(t *testing.T) {
	t.Parallel()
	for seed := range uint64(400) {
		in := randomInput(rand.New(rand.NewPCG(seed, 9)))
		in.Quotas = placement.Quotas{}
		r := place(t, in)
		left := leftover(in, r)
		for _, u := range r.Unplaced {
			s := *findSession(in, u.SessionID)
			if !u.Tried || u.Reason != domain.ReasonNoAvailableInstances || len(s.Kernels) != 1 {
				continue
			}
			left.Sessions = []placement.Session{s}
			if again, err := placement.Place(left); err != nil || len(again.Placed) != 0 {
				t.Fatalf("seed %d: session %s was left out (%q) but fits what is left: %v %+v", seed, s.ID, u.Details(), err, again.Placed)
			}
		}
	}
}

// leftover is in with the result's placements added to the occupancy.
func leftover(in placement.Input, r placement.Result) placement.Input {
	out := in
	out.Agents = slices.Clone(in.Agents)
	byAgent := map[string]int{}
	for i := range out.Agents {
		byAgent[out.Agents[i].ID] = i
		out.Agents[i].Occupied = out.Agents[i].Occupied.Clone()
		out.Agents[i].Devices = slices.Clone(out.Agents[i].Devices)
	}
	for _, p := range r.Placed {
		s := findSession(in, p.SessionID)
		for i, k := range p.Kernels {
			a := &out.Agents[byAgent[k.AgentID]]
			a.Occupied = a.Occupied.Add(s.Kernels[i].Slots)
			for _, d := range k.Devices {
				j := slices.IndexFunc(a.Devices, func(x placement.Device) bool { return x.ID == d.DeviceID })
				if a.Devices[j].Kind == domain.SlotCUDADevice && s.Kernels[i].Slots[domain.SlotCUDAShares] > 0 {
					a.Devices[j].Used += d.Amount
				} else {
					a.Devices[j].Used = domainWhole(a.Devices[j])
				}
			}
		}
	}
	return out
}

func findSession(in placement.Input, id uuid.UUID) *placement.Session {
	for i := range in.Sessions {
		if in.Sessions[i].ID == id {
			return &in.Sessions[i]
		}
	}
	return nil
}

// TestRankingsAgreeWithExhaustiveScans: the rankings (concentrated,
// dispersed) are a shortcut; comparing every agent that fits must give
// the same result.
func TestRankingsAgreeWithExhaustiveScans(t *testing.T) {
	t.Parallel()
	for seed := range uint64(600) {
		in := randomInput(rand.New(rand.NewPCG(seed, 11)))
		for i := range in.Groups {
			in.Groups[i].Selector = []placement.Selector{placement.SelectorConcentrated, placement.SelectorDispersed}[(int(seed)+i)%2]
		}
		if seed%2 == 0 {
			in.Ungrouped.Selector = placement.SelectorConcentrated
		}
		if seed%3 == 0 { // identical agents: only ids break the ties
			for i := range in.Agents {
				a := &in.Agents[i]
				a.Capacity, a.Occupied, a.Architecture = in.Agents[0].Capacity, in.Agents[0].Occupied, in.Agents[0].Architecture
				a.Devices = nil
				for _, d := range in.Agents[0].Devices {
					d.ID = fmt.Sprintf("%s-%s", a.ID, d.ID)
					a.Devices = append(a.Devices, d)
				}
			}
		}
		fast, err := placement.Place(in)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := placement.PlaceExhaustively(in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("seed %d: rankings and exhaustive scans differ:\n%+v\n%+v", seed, fast.Placed, slow.Placed)
		}
	}
}
