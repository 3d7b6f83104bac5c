package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// randomShape draws a cluster and a queue: agents with or without GPUs,
// some already partly occupied, and sessions asking for cpu and memory,
// whole GPUs or fractional shares, single- or multi-node.
func randomShape(rng *rand.Rand) ([]scheduler.Request, []scheduler.Node) {
	var nodes []scheduler.Node
	for i := range 1 + rng.IntN(5) {
		var free []string
		for range rng.IntN(5) {
			free = append(free, []string{"1", "1", "1", "0.5", "0.25", "0"}[rng.IntN(6)])
		}
		n := gpuNode(fmt.Sprintf("a%d", i), int64(2+rng.IntN(30)), int64(4+rng.IntN(120)), free...)
		n.Occupied = cpuMem(int64(rng.IntN(2)), int64(rng.IntN(4)))
		for _, d := range n.Devices {
			n.Occupied[domain.SlotCUDAShares] += domain.DeviceShareCapacity - d.Free
		}
		nodes = append(nodes, n)
	}
	var requests []scheduler.Request
	for i := range 1 + rng.IntN(40) {
		slots := cpuMem(int64(1+rng.IntN(8)), int64(1+rng.IntN(48)))
		switch rng.IntN(4) {
		case 1:
			slots[domain.SlotCUDADevice] = domain.Units(int64(1 + rng.IntN(3)))
		case 2:
			slots[domain.SlotCUDAShares] = domain.Quantity(int64(1+rng.IntN(250)) * 10) // 0.01 .. 2.5
		}
		r := req(i+1, slots, 1+rng.IntN(3))
		r.Priority = rng.IntN(3) * 10
		if rng.IntN(2) == 0 {
			r.ClusterMode = domain.ClusterMultiNode
		}
		requests = append(requests, r)
	}
	return requests, nodes
}

// TestPlaceNeverOversubscribes replays every plan through the agent
// aggregate's own allocation rule, which refuses any slot or device share
// beyond what is free, and checks the session rules (every kernel placed
// once, single-node sessions on one agent). Sessions left unplaced must
// not fit on what remains.
func TestPlaceNeverOversubscribes(t *testing.T) {
	t.Parallel()
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		requests, nodes := randomShape(rng)
		plan := scheduler.Place(requests, nodes)

		occupied := map[string][]domain.RecordedEvent{}
		for _, n := range nodes {
			occupied[n.AgentID] = nodeEvents(n)
		}
		byID := map[uuid.UUID]scheduler.Request{}
		for _, r := range requests {
			byID[r.SessionID] = r
		}
		if len(plan.Placed)+len(plan.Unplaced) != len(requests) {
			t.Fatalf("seed %d: %d placed + %d unplaced of %d", seed, len(plan.Placed), len(plan.Unplaced), len(requests))
		}
		for _, p := range plan.Placed {
			r := byID[p.SessionID]
			if len(p.Kernels) != len(r.Kernels) {
				t.Fatalf("seed %d: %d of %d kernels placed", seed, len(p.Kernels), len(r.Kernels))
			}
			for i, kp := range p.Kernels {
				if kp.KernelID != r.Kernels[i].KernelID {
					t.Fatalf("seed %d: kernel order", seed)
				}
				if r.ClusterMode == domain.ClusterSingleNode && kp.AgentID != p.Kernels[0].AgentID {
					t.Fatalf("seed %d: single-node session spans agents", seed)
				}
				a, err := domain.RehydrateAgent(occupied[kp.AgentID])
				if err != nil {
					t.Fatal(err)
				}
				evs, err := a.Allocate(kp.KernelID, p.SessionID, r.Kernels[i].Slots, kp.Devices, t0)
				if err != nil {
					t.Fatalf("seed %d: the agent refuses the plan: %v", seed, err)
				}
				for _, ev := range evs {
					occupied[kp.AgentID] = append(occupied[kp.AgentID], domain.RecordedEvent{Revision: int64(len(occupied[kp.AgentID])), Event: ev})
				}
			}
		}
		// What is left cannot take any unplaced session.
		var left []scheduler.Node
		for _, n := range nodes {
			a, err := domain.RehydrateAgent(occupied[n.AgentID])
			if err != nil {
				t.Fatal(err)
			}
			left = append(left, nodeOf(a))
		}
		for _, u := range plan.Unplaced {
			if len(u.Details) == 0 {
				t.Fatalf("seed %d: no reason given for %s", seed, u.SessionID)
			}
			if again := scheduler.Place([]scheduler.Request{byID[u.SessionID]}, left); len(again.Placed) != 0 {
				t.Fatalf("seed %d: session %s was left out but fits: %+v", seed, u.SessionID, again.Placed)
			}
		}
	}
}

// nodeEvents is the agent stream a Node stands for: its registration and
// allocations holding what the node has occupied: one per partly used
// device (its shares), one for the other slots.
func nodeEvents(n scheduler.Node) []domain.RecordedEvent {
	reg := domain.AgentRegistered{AgentID: n.AgentID, Architecture: "x86_64", Capacity: n.Capacity, At: t0}
	for _, d := range n.Devices {
		reg.Devices = append(reg.Devices, domain.Device{ID: d.ID, Kind: d.Kind})
	}
	evs := []domain.RecordedEvent{{Revision: 0, Event: reg}}
	for i, d := range n.Devices {
		if used := domain.DeviceShareCapacity - d.Free; used > 0 {
			// One allocation per partly used device, its shares only.
			evs = append(evs, domain.RecordedEvent{Revision: int64(len(evs)), Event: domain.AgentAllocated{
				KernelID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(n.AgentID, i))), SessionID: uuid.New(),
				Slots:   domain.Slots{domain.SlotCUDAShares: used},
				Devices: []domain.DeviceShare{{DeviceID: d.ID, Amount: used}}, At: t0,
			}})
		}
	}
	// The rest of the occupancy (shares are counted above).
	rest := n.Occupied.Clone()
	delete(rest, domain.SlotCUDAShares)
	if !rest.IsZero() {
		evs = append(evs, domain.RecordedEvent{Revision: int64(len(evs)), Event: domain.AgentAllocated{
			KernelID: uuid.New(), SessionID: uuid.New(), Slots: rest, At: t0,
		}})
	}
	return evs
}

// nodeOf is the Node of an agent aggregate, as the scheduler folds it.
func nodeOf(a *domain.Agent) scheduler.Node {
	n := scheduler.Node{AgentID: a.ID(), Capacity: a.Capacity(), Occupied: a.Occupied()}
	for _, d := range a.Devices() {
		n.Devices = append(n.Devices, scheduler.NodeDevice{ID: d.ID, Kind: d.Kind, Free: a.DeviceFree(d.ID)})
	}
	return n
}
