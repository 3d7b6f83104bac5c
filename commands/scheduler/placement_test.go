package scheduler_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func q(s string) domain.Quantity {
	v, err := domain.ParseQuantity(s, domain.SlotCount)
	if err != nil {
		panic(err)
	}
	return v
}

func gib(n int64) domain.Quantity { return domain.Units(n << 30) }

// sid and kid make readable fixed ids: session n, kernel n.k.
func sid(n int) uuid.UUID { return uuid.MustParse(fmt.Sprintf("0195a0c0-0000-7000-8000-%012d", n)) }
func kid(n, k int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("0195a0c0-0000-7000-9000-%08d%04d", n, k))
}

// req is a single-node session n asking slots for each of its kernels.
func req(n int, slots domain.Slots, kernels int) scheduler.Request {
	r := scheduler.Request{SessionID: sid(n), Priority: domain.DefaultPriority, RequestedAt: t0.Add(time.Duration(n) * time.Second), ClusterMode: domain.ClusterSingleNode}
	for k := range kernels {
		r.Kernels = append(r.Kernels, scheduler.KernelRequest{KernelID: kid(n, k), Slots: slots.Clone()})
	}
	return r
}

func cpuMem(cpu int64, mem int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: gib(mem)}
}

func with(s domain.Slots, name domain.SlotName, v domain.Quantity) domain.Slots {
	s = s.Clone()
	s[name] = v
	return s
}

// gpuNode is an agent with cpus, mem GiB and whole GPUs GPU-<id>-<i>, the
// given free share each (nothing else occupied).
func gpuNode(id string, cpus, mem int64, free ...string) scheduler.Node {
	n := scheduler.Node{AgentID: id, Capacity: cpuMem(cpus, mem), Occupied: domain.Slots{}}
	if len(free) > 0 {
		n.Capacity[domain.SlotCUDADevice] = domain.Units(int64(len(free)))
		n.Capacity[domain.SlotCUDAShares] = domain.Units(int64(len(free)))
	}
	for i, f := range free {
		n.Devices = append(n.Devices, scheduler.NodeDevice{ID: fmt.Sprintf("GPU-%s-%d", id, i), Kind: domain.SlotCUDADevice, Free: q(f)})
	}
	return n
}

func placedOn(p scheduler.Plan, session uuid.UUID) []domain.KernelPlacement {
	for _, pl := range p.Placed {
		if pl.SessionID == session {
			return pl.Kernels
		}
	}
	return nil
}

func share(device, amount string) domain.DeviceShare {
	return domain.DeviceShare{DeviceID: device, Amount: q(amount)}
}

func TestPlace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		requests []scheduler.Request
		nodes    []scheduler.Node
		check    func(t *testing.T, p scheduler.Plan)
	}{
		{
			name:     "dispersed: the agent with the most free cpu",
			requests: []scheduler.Request{req(1, cpuMem(1, 1), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 4, 16), gpuNode("a2", 8, 16), gpuNode("a3", 8, 8)},
			check: func(t *testing.T, p scheduler.Plan) {
				if k := placedOn(p, sid(1)); len(k) != 1 || k[0].AgentID != "a2" {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name:     "a cpu-only session stays off GPU agents when it can",
			requests: []scheduler.Request{req(1, cpuMem(1, 1), 1)},
			nodes:    []scheduler.Node{gpuNode("gpu", 64, 256, "1", "1"), gpuNode("cpu", 4, 8)},
			check: func(t *testing.T, p scheduler.Plan) {
				if k := placedOn(p, sid(1)); len(k) != 1 || k[0].AgentID != "cpu" || k[0].Devices != nil {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name:     "fractional shares go to the device that fits them best",
			requests: []scheduler.Request{req(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.3")), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 8, 16, "1", "0.5", "0.2")},
			check: func(t *testing.T, p scheduler.Plan) {
				want := []domain.DeviceShare{share("GPU-a1-1", "0.3")}
				if k := placedOn(p, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name:     "shares above one device split evenly over the fewest devices",
			requests: []scheduler.Request{req(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1.5")), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 8, 16, "1", "1", "1")},
			check: func(t *testing.T, p scheduler.Plan) {
				want := []domain.DeviceShare{share("GPU-a1-0", "0.75"), share("GPU-a1-1", "0.75")}
				if k := placedOn(p, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "whole devices take devices nothing is allocated on",
			requests: []scheduler.Request{
				req(1, with(cpuMem(1, 1), domain.SlotCUDADevice, domain.Units(2)), 1),
			},
			nodes: []scheduler.Node{gpuNode("a1", 8, 16, "0.5", "1", "1")},
			check: func(t *testing.T, p scheduler.Plan) {
				want := []domain.DeviceShare{share("GPU-a1-1", "1"), share("GPU-a1-2", "1")}
				if k := placedOn(p, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name:     "a MIG profile takes a device of that profile",
			requests: []scheduler.Request{req(1, with(cpuMem(1, 1), "cuda.device:1g.10gb-mig", domain.Units(1)), 1)},
			nodes: []scheduler.Node{{
				AgentID: "a1", Capacity: with(cpuMem(8, 16), "cuda.device:1g.10gb-mig", domain.Units(2)), Occupied: domain.Slots{},
				Devices: []scheduler.NodeDevice{
					{ID: "MIG-a", Kind: "cuda.device:1g.10gb-mig", Free: 0},
					{ID: "MIG-b", Kind: "cuda.device:1g.10gb-mig", Free: domain.DeviceShareCapacity},
				},
			}},
			check: func(t *testing.T, p scheduler.Plan) {
				if k := placedOn(p, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, []domain.DeviceShare{share("MIG-b", "1")}) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name:     "a single-node session's kernels share one agent",
			requests: []scheduler.Request{req(1, cpuMem(2, 2), 3)},
			nodes:    []scheduler.Node{gpuNode("a1", 4, 64), gpuNode("a2", 6, 64)},
			check: func(t *testing.T, p scheduler.Plan) {
				k := placedOn(p, sid(1))
				if len(k) != 3 || k[0].AgentID != "a2" || k[1].AgentID != "a2" || k[2].AgentID != "a2" {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a multi-node session's kernels spread",
			requests: func() []scheduler.Request {
				r := req(1, cpuMem(2, 2), 2)
				r.ClusterMode = domain.ClusterMultiNode
				return []scheduler.Request{r}
			}(),
			nodes: []scheduler.Node{gpuNode("a1", 4, 64), gpuNode("a2", 4, 64)},
			check: func(t *testing.T, p scheduler.Plan) {
				k := placedOn(p, sid(1))
				if len(k) != 2 || k[0].AgentID == k[1].AgentID {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "priority first, then the oldest; one that does not fit blocks nobody",
			requests: []scheduler.Request{
				req(3, cpuMem(2, 1), 1),
				req(2, cpuMem(3, 1), 1), // older than 3, too big once 1 is placed
				func() scheduler.Request {
					r := req(1, cpuMem(2, 1), 1)
					r.Priority = 50
					r.RequestedAt = t0.Add(time.Hour)
					return r
				}(),
			},
			nodes: []scheduler.Node{gpuNode("a1", 4, 64)},
			check: func(t *testing.T, p scheduler.Plan) {
				var order []uuid.UUID
				for _, pl := range p.Placed {
					order = append(order, pl.SessionID)
				}
				if !slices.Equal(order, []uuid.UUID{sid(1), sid(3)}) || len(p.Unplaced) != 1 || p.Unplaced[0].SessionID != sid(2) {
					t.Fatalf("placed %v, unplaced %+v", order, p.Unplaced)
				}
			},
		},
		{
			name:     "more memory than any agent has names mem",
			requests: []scheduler.Request{req(1, cpuMem(1, 512), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 8, 64), gpuNode("a2", 8, 128)},
			check: func(t *testing.T, p scheduler.Plan) {
				wantUnplaced(t, p, sid(1), "mem: requested 512G exceeds the capacity of every agent")
			},
		},
		{
			name:     "fragmented shares: enough in total, not on one device",
			requests: []scheduler.Request{req(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.6")), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 8, 64, "0.5", "0.5")},
			check: func(t *testing.T, p scheduler.Plan) {
				wantUnplaced(t, p, sid(1), "cuda.shares: no GPU has 0.6 free on one device")
			},
		},
		{
			name:     "every slot fits somewhere, never together",
			requests: []scheduler.Request{req(1, cpuMem(8, 64), 1)},
			nodes:    []scheduler.Node{gpuNode("a1", 8, 16), gpuNode("a2", 2, 64)},
			check: func(t *testing.T, p scheduler.Plan) {
				wantUnplaced(t, p, sid(1), "no agent has cpu, mem free at once")
			},
		},
		{
			name:     "no agent at all",
			requests: []scheduler.Request{req(1, cpuMem(1, 1), 1)},
			check: func(t *testing.T, p scheduler.Plan) {
				wantUnplaced(t, p, sid(1), "no agent is registered and alive")
			},
		},
		{
			name:     "occupied capacity is not free",
			requests: []scheduler.Request{req(1, cpuMem(4, 1), 1)},
			nodes: []scheduler.Node{func() scheduler.Node {
				n := gpuNode("a1", 8, 64)
				n.Occupied = cpuMem(6, 1)
				return n
			}()},
			check: func(t *testing.T, p scheduler.Plan) {
				wantUnplaced(t, p, sid(1), "cpu: requested 4, no agent has that much free")
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := scheduler.Place(c.requests, c.nodes)
			c.check(t, p)
			if again := scheduler.Place(c.requests, c.nodes); !reflect.DeepEqual(p, again) {
				t.Fatal("Place is not deterministic")
			}
		})
	}
}

func wantUnplaced(t *testing.T, p scheduler.Plan, session uuid.UUID, detail string) {
	t.Helper()
	for _, u := range p.Unplaced {
		if u.SessionID != session {
			continue
		}
		if u.Reason != domain.ReasonNoAvailableInstances || !slices.Contains(u.Details, detail) {
			t.Fatalf("unplaced %s %q, want the detail %q", u.Reason, strings.Join(u.Details, "; "), detail)
		}
		return
	}
	t.Fatalf("session %s was placed: %+v", session, p.Placed)
}
