package placement_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// ungrouped is the input of a round without resource-group or quota views.
func ungrouped(sessions []placement.Session, agents ...placement.Agent) placement.Input {
	return placement.Input{Now: t0.Add(24 * 3600e9), Sessions: sessions, Agents: agents}
}

func TestPlaceAgentsAndDevices(t *testing.T) {
	t.Parallel()
	mig := "cuda.device:1g.10gb-mig"
	cases := []struct {
		name  string
		in    placement.Input
		check func(t *testing.T, r placement.Result)
	}{
		{
			name: "dispersed: the agent with the most free cpu",
			in:   ungrouped([]placement.Session{sess(1, cpuMem(1, 1), 1)}, gpuAgent("a1", 4, 16), gpuAgent("a2", 8, 16), gpuAgent("a3", 8, 8)),
			check: func(t *testing.T, r placement.Result) {
				if got := agentsOf(r, sid(1)); !slices.Equal(got, []string{"a2"}) {
					t.Fatalf("placed on %v", got)
				}
			},
		},
		{
			name: "a cpu-only session stays off GPU agents when it can",
			in:   ungrouped([]placement.Session{sess(1, cpuMem(1, 1), 1)}, gpuAgent("gpu", 64, 256, "1", "1"), gpuAgent("cpu", 4, 8)),
			check: func(t *testing.T, r placement.Result) {
				if k := placedOn(r, sid(1)); len(k) != 1 || k[0].AgentID != "cpu" || k[0].Devices != nil {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a cpu-only session takes a GPU agent when no other fits",
			in:   ungrouped([]placement.Session{sess(1, cpuMem(8, 1), 1)}, gpuAgent("gpu", 64, 256, "1", "1"), gpuAgent("cpu", 4, 8)),
			check: func(t *testing.T, r placement.Result) {
				if got := agentsOf(r, sid(1)); !slices.Equal(got, []string{"gpu"}) {
					t.Fatalf("placed on %v", got)
				}
			},
		},
		{
			name: "fractional shares go to the device that fits them best",
			in:   ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.3")), 1)}, gpuAgent("a1", 8, 16, "1", "0.5", "0.2")),
			check: func(t *testing.T, r placement.Result) {
				want := []domain.DeviceShare{share("GPU-a1-1", "0.3")}
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "shares above one device split evenly over the fewest devices",
			in:   ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1.5")), 1)}, gpuAgent("a1", 8, 16, "1", "1", "1")),
			check: func(t *testing.T, r placement.Result) {
				want := []domain.DeviceShare{share("GPU-a1-0", "0.75"), share("GPU-a1-1", "0.75")}
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "an uneven split in steps of 0.01 over partly used devices",
			in:   ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1.01")), 1)}, gpuAgent("a1", 8, 16, "0.5", "0.51", "0.4")),
			check: func(t *testing.T, r placement.Result) {
				want := []domain.DeviceShare{share("GPU-a1-0", "0.5"), share("GPU-a1-1", "0.51")}
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "whole devices take devices nothing is allocated on",
			in:   ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDADevice, domain.Units(2)), 1)}, gpuAgent("a1", 8, 16, "0.5", "1", "1")),
			check: func(t *testing.T, r placement.Result) {
				want := []domain.DeviceShare{share("GPU-a1-1", "1"), share("GPU-a1-2", "1")}
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a MIG profile takes a free device of that profile",
			in: ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotName(mig), domain.Units(1)), 1)}, func() placement.Agent {
				a := migAgent("a1", "1g.10gb", "1g.10gb", "3g.40gb")
				a.Devices[0].Used = domain.DeviceShareCapacity
				return a
			}()),
			check: func(t *testing.T, r placement.Result) {
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, []domain.DeviceShare{share("MIG-a1-1", "1")}) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a GPU with a larger share quantum holds more on one device",
			in: ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1.5")), 1)}, func() placement.Agent {
				a := gpuAgent("a1", 8, 16)
				a.Capacity[domain.SlotCUDAShares] = domain.Units(4)
				a.Devices = []placement.Device{placement.GPU("GPU-a", domain.Units(2), 0), placement.GPU("GPU-b", domain.Units(2), q("0.4"))}
				return a
			}()),
			check: func(t *testing.T, r placement.Result) {
				if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, []domain.DeviceShare{share("GPU-b", "1.5")}) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a single-node session's kernels share one agent",
			in:   ungrouped([]placement.Session{sess(1, cpuMem(2, 2), 3)}, gpuAgent("a1", 4, 64), gpuAgent("a2", 6, 64)),
			check: func(t *testing.T, r placement.Result) {
				if got := agentsOf(r, sid(1)); !slices.Equal(got, []string{"a2", "a2", "a2"}) {
					t.Fatalf("placed on %v", got)
				}
			},
		},
		{
			name: "a single-node session's shares kernels pack largest first on its agent",
			in: ungrouped([]placement.Session{func() placement.Session {
				s := sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.3")), 2)
				s.Kernels[1].Slots[domain.SlotCUDAShares] = q("0.7")
				return s
			}()}, gpuAgent("a1", 8, 16, "0.7", "0.3")),
			check: func(t *testing.T, r placement.Result) {
				k := placedOn(r, sid(1))
				if len(k) != 2 || !reflect.DeepEqual(k[0].Devices, []domain.DeviceShare{share("GPU-a1-1", "0.3")}) ||
					!reflect.DeepEqual(k[1].Devices, []domain.DeviceShare{share("GPU-a1-0", "0.7")}) {
					t.Fatalf("placed %+v", k)
				}
			},
		},
		{
			name: "a multi-node session's kernels spread",
			in: ungrouped([]placement.Session{func() placement.Session {
				s := sess(1, cpuMem(2, 2), 2)
				s.ClusterMode = domain.ClusterMultiNode
				return s
			}()}, gpuAgent("a1", 4, 64), gpuAgent("a2", 4, 64)),
			check: func(t *testing.T, r placement.Result) {
				if got := agentsOf(r, sid(1)); !slices.Equal(got, []string{"a1", "a2"}) {
					t.Fatalf("placed on %v", got)
				}
			},
		},
		{
			name: "a multi-node session that does not fit whole takes nothing",
			in: func() placement.Input {
				s := sess(1, cpuMem(3, 2), 3)
				s.ClusterMode, s.Tries = domain.ClusterMultiNode, 1
				in := ungrouped([]placement.Session{s, sess(2, cpuMem(4, 2), 1)}, gpuAgent("a1", 4, 64), gpuAgent("a2", 4, 64))
				in.Ungrouped.SkipAfterTries = 1 // 1 does not block 2
				return in
			}(),
			check: func(t *testing.T, r placement.Result) {
				wantDetails(t, r, sid(1), domain.ReasonNoAvailableInstances, "not enough agents with free capacity for all 3 kernels")
				// Had the first two kernels been kept, 2 would not fit.
				if got := agentsOf(r, sid(2)); !slices.Equal(got, []string{"a1"}) {
					t.Fatalf("session 2 placed on %v", got)
				}
			},
		},
		{
			name: "an agent of another architecture is not a candidate",
			in: ungrouped([]placement.Session{func() placement.Session {
				s := sess(1, cpuMem(1, 1), 1)
				s.Architecture = "aarch64"
				return s
			}(), func() placement.Session {
				s := sess(2, cpuMem(1, 1), 1)
				s.Architecture = "riscv64"
				return s
			}()}, gpuAgent("a1", 16, 64), func() placement.Agent {
				a := gpuAgent("arm", 4, 64)
				a.Architecture = "aarch64"
				return a
			}()),
			check: func(t *testing.T, r placement.Result) {
				if got := agentsOf(r, sid(1)); !slices.Equal(got, []string{"arm"}) {
					t.Fatalf("placed on %v", got)
				}
				wantDetails(t, r, sid(2), domain.ReasonNoAvailableInstances, "architecture: no schedulable agent of architecture riscv64")
			},
		},
		{
			name: "an unschedulable agent takes nothing",
			in: ungrouped([]placement.Session{sess(1, cpuMem(1, 1), 1)}, func() placement.Agent {
				a := gpuAgent("a1", 16, 64)
				a.Schedulable = false
				return a
			}()),
			check: func(t *testing.T, r placement.Result) {
				wantDetails(t, r, sid(1), domain.ReasonNoAvailableInstances, "no schedulable agent")
			},
		},
		{
			name: "occupied capacity is not free",
			in: ungrouped([]placement.Session{sess(1, cpuMem(4, 1), 1)}, func() placement.Agent {
				a := gpuAgent("a1", 8, 64)
				a.Occupied = cpuMem(6, 1)
				return a
			}()),
			check: func(t *testing.T, r placement.Result) {
				wantDetails(t, r, sid(1), domain.ReasonNoAvailableInstances, "cpu: requested 4, no agent has that much free")
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.check(t, place(t, c.in))
		})
	}
}

func TestPlaceExplainsCapacity(t *testing.T) {
	t.Parallel()
	shares := func(n int, amount string) placement.Session {
		return sess(n, with(cpuMem(1, 1), domain.SlotCUDAShares, q(amount)), 1)
	}
	cases := []struct {
		name    string
		session placement.Session
		agents  []placement.Agent
		details []string
	}{
		{"more memory than any agent has", sess(1, cpuMem(1, 512), 1),
			[]placement.Agent{gpuAgent("a1", 8, 64), gpuAgent("a2", 8, 128)},
			[]string{"mem: requested 512G exceeds the capacity of every agent"}},
		{"fragmented shares: enough in total, not on one device", shares(1, "0.6"),
			[]placement.Agent{gpuAgent("a1", 8, 64, "0.5", "0.5")},
			[]string{"cuda.shares: no GPU has 0.6 free on one device"}},
		{"more shares than any agent's GPUs hold", shares(1, "2.5"),
			[]placement.Agent{gpuAgent("a1", 8, 64, "1", "1")},
			[]string{"cuda.shares: requested 2.5 exceeds the capacity of every agent"}},
		{"more shares free in total than any agent has", shares(1, "1.5"),
			[]placement.Agent{gpuAgent("a1", 8, 64, "0.5", "0.5")},
			[]string{"cuda.shares: no agent has GPUs with 1.5 free in total"}},
		{"whole devices partly used", sess(1, with(cpuMem(1, 1), domain.SlotCUDADevice, domain.Units(2)), 1),
			[]placement.Agent{gpuAgent("a1", 8, 64, "1", "0.5")},
			[]string{"cuda.device: no agent has 2 such devices entirely free"}},
		{"every slot fits somewhere, never together", sess(1, cpuMem(8, 64), 1),
			[]placement.Agent{gpuAgent("a1", 8, 16), gpuAgent("a2", 2, 64)},
			[]string{"no agent has cpu, mem free at once"}},
		{"several failed slots are all named", sess(1, with(cpuMem(16, 512), domain.SlotCUDADevice, domain.Units(1)), 1),
			[]placement.Agent{gpuAgent("a1", 8, 64)},
			[]string{"cpu: requested 16 exceeds the capacity of every agent", "cuda.device: requested 1 exceeds the capacity of every agent",
				"mem: requested 512G exceeds the capacity of every agent"}},
		{"no agent at all", sess(1, cpuMem(1, 1), 1), nil, []string{"no schedulable agent"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := place(t, ungrouped([]placement.Session{c.session}, c.agents...))
			wantDetails(t, r, c.session.ID, domain.ReasonNoAvailableInstances, c.details...)
		})
	}
}

// TestBestFitPlacesWhatFirstFitCannot is the fleet of the issue: first
// fit (each request on the first device with room, in order) reports
// "insufficient" for the last request, though a packing exists; the best
// fit finds it.
func TestBestFitPlacesWhatFirstFitCannot(t *testing.T) {
	t.Parallel()
	sessions := []placement.Session{
		sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.3")), 1),
		sess(2, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.5")), 1),
		sess(3, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1")), 1),
		sess(4, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.6")), 1),
	}
	// GPU-0 is free, the others have 0.4, 0.5 and 0.6 left: first fit puts
	// 0.3 and 0.5 on GPU-0 and has no whole GPU left for 1.0; best fit
	// puts them in the holes that match.
	in := ungrouped(sessions, gpuAgent("a1", 8, 64, "1", "0.4", "0.5", "0.6"))
	in.Ungrouped.SkipAfterTries = 1
	r := place(t, in)
	if len(r.Placed) != 4 {
		t.Fatalf("placed %d of 4: %+v", len(r.Placed), r.Unplaced)
	}
	want := map[int]string{1: "GPU-a1-1", 2: "GPU-a1-2", 3: "GPU-a1-0", 4: "GPU-a1-3"}
	for n, dev := range want {
		if k := placedOn(r, sid(n)); k[0].Devices[0].DeviceID != dev {
			t.Fatalf("session %d on %+v, want %s", n, k[0].Devices, dev)
		}
	}
	if ff := firstFit(in); ff.placed != 3 {
		t.Fatalf("first fit placed %d, the fleet no longer shows the difference", ff.placed)
	}
}

func TestFragmentationSplitsAnyWayWhenAllowed(t *testing.T) {
	t.Parallel()
	in := ungrouped([]placement.Session{sess(1, with(cpuMem(1, 1), domain.SlotCUDAShares, q("1.5")), 1)}, gpuAgent("a1", 8, 64, "0.7", "0.5", "0.3"))
	r := place(t, in)
	wantDetails(t, r, sid(1), domain.ReasonNoAvailableInstances, "no agent has cpu, cuda.shares, mem free at once")

	in.Ungrouped.AllowFractionalFragmentation = true
	r = place(t, in)
	want := []domain.DeviceShare{share("GPU-a1-0", "0.7"), share("GPU-a1-1", "0.5"), share("GPU-a1-2", "0.3")}
	if k := placedOn(r, sid(1)); len(k) != 1 || !reflect.DeepEqual(k[0].Devices, want) {
		t.Fatalf("placed %+v", k)
	}

	// A request one device can hold still needs one device.
	in.Sessions = []placement.Session{sess(2, with(cpuMem(1, 1), domain.SlotCUDAShares, q("0.8")), 1)}
	r = place(t, in)
	wantDetails(t, r, sid(2), domain.ReasonNoAvailableInstances, "cuda.shares: no GPU has 0.8 free on one device")
}
