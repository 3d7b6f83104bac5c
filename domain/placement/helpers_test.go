package placement_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
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

func cpuMem(cpu, mem int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: gib(mem)}
}

func with(s domain.Slots, name domain.SlotName, v domain.Quantity) domain.Slots {
	s = s.Clone()
	s[name] = v
	return s
}

// sess is single-node session n, enqueued n seconds after t0, asking
// slots for each of its kernels, owned by AK1 (u1, p1, d1).
func sess(n int, slots domain.Slots, kernels int) placement.Session {
	s := placement.Session{
		ID: sid(n), AccessKey: "AK1", UserID: "u1", Project: "p1", Domain: "d1", ResourceGroup: "default",
		Priority: domain.DefaultPriority, EnqueuedAt: t0.Add(time.Duration(n) * time.Second), EnqueuedSeq: uint64(n),
		ClusterMode: domain.ClusterSingleNode,
	}
	for k := range kernels {
		s.Kernels = append(s.Kernels, placement.Kernel{ID: kid(n, k), Slots: slots.Clone()})
	}
	return s
}

// gpuAgent is a schedulable agent with cpus, mem GiB and whole GPUs
// GPU-<id>-<i>, each with the given free share of 1.0.
func gpuAgent(id string, cpus, mem int64, free ...string) placement.Agent {
	a := placement.Agent{ID: id, Architecture: "x86_64", ResourceGroup: "default", Schedulable: true, Capacity: cpuMem(cpus, mem)}
	if len(free) > 0 {
		a.Capacity[domain.SlotCUDADevice] = domain.Units(int64(len(free)))
		a.Capacity[domain.SlotCUDAShares] = domain.Units(int64(len(free)))
	}
	for i, f := range free {
		a.Devices = append(a.Devices, placement.GPU(fmt.Sprintf("GPU-%s-%d", id, i), 0, domain.DeviceShareCapacity-q(f)))
	}
	return a
}

// migAgent has one MIG device per profile given, MIG-<id>-<i>.
func migAgent(id string, profiles ...string) placement.Agent {
	a := placement.Agent{ID: id, Architecture: "x86_64", ResourceGroup: "default", Schedulable: true, Capacity: cpuMem(64, 512)}
	for i, p := range profiles {
		a.Capacity[placement.MIGSlot(p)] += domain.Units(1)
		a.Devices = append(a.Devices, placement.MIG(fmt.Sprintf("MIG-%s-%d", id, i), p, false))
	}
	return a
}

func share(device, amount string) domain.DeviceShare {
	return domain.DeviceShare{DeviceID: device, Amount: q(amount)}
}

// place runs Place and checks that it is deterministic: again on the
// same input, and on the input with its slices shuffled.
func place(t testing.TB, in placement.Input) placement.Result {
	t.Helper()
	res, err := placement.Place(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := placement.Place(in)
	if err != nil || !reflect.DeepEqual(res, again) {
		t.Fatalf("Place is not deterministic: %v", err)
	}
	shuffled := shuffle(in, rand.New(rand.NewPCG(uint64(len(in.Sessions)), 3)))
	if other, err := placement.Place(shuffled); err != nil || !reflect.DeepEqual(res, other) {
		t.Fatalf("the order of the input changed the result: %v\n%+v\n%+v", err, res, other)
	}
	return res
}

// shuffle copies in with its agents, devices, sessions, groups and
// dependencies in another order (kernels keep theirs: it matters).
func shuffle(in placement.Input, rng *rand.Rand) placement.Input {
	out := in
	out.Agents = slices.Clone(in.Agents)
	rng.Shuffle(len(out.Agents), func(i, j int) { out.Agents[i], out.Agents[j] = out.Agents[j], out.Agents[i] })
	for i := range out.Agents {
		d := slices.Clone(out.Agents[i].Devices)
		rng.Shuffle(len(d), func(x, y int) { d[x], d[y] = d[y], d[x] })
		out.Agents[i].Devices = d
	}
	out.Sessions = slices.Clone(in.Sessions)
	rng.Shuffle(len(out.Sessions), func(i, j int) { out.Sessions[i], out.Sessions[j] = out.Sessions[j], out.Sessions[i] })
	for i := range out.Sessions {
		d := slices.Clone(out.Sessions[i].Dependencies)
		rng.Shuffle(len(d), func(x, y int) { d[x], d[y] = d[y], d[x] })
		out.Sessions[i].Dependencies = d
	}
	out.Groups = slices.Clone(in.Groups)
	rng.Shuffle(len(out.Groups), func(i, j int) { out.Groups[i], out.Groups[j] = out.Groups[j], out.Groups[i] })
	return out
}

func placedOn(r placement.Result, session uuid.UUID) []domain.KernelPlacement {
	for _, p := range r.Placed {
		if p.SessionID == session {
			return p.Kernels
		}
	}
	return nil
}

func order(r placement.Result) []uuid.UUID {
	var out []uuid.UUID
	for _, p := range r.Placed {
		out = append(out, p.SessionID)
	}
	return out
}

func unplaced(t testing.TB, r placement.Result, session uuid.UUID) placement.Unplaced {
	t.Helper()
	for _, u := range r.Unplaced {
		if u.SessionID == session {
			return u
		}
	}
	t.Fatalf("session %s was placed: %+v", session, placedOn(r, session))
	return placement.Unplaced{}
}

// wantDetails checks an unplaced session's reason and details, exactly.
func wantDetails(t testing.TB, r placement.Result, session uuid.UUID, reason string, details ...string) {
	t.Helper()
	u := unplaced(t, r, session)
	if u.Reason != reason || !slices.Equal(u.Details(), details) {
		t.Fatalf("unplaced %s %q\nwant      %s %q", u.Reason, strings.Join(u.Details(), "; "), reason, strings.Join(details, "; "))
	}
}

func agentsOf(r placement.Result, session uuid.UUID) []string {
	var out []string
	for _, k := range placedOn(r, session) {
		out = append(out, k.AgentID)
	}
	return out
}
