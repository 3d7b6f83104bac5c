package placement_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

func TestChecks(t *testing.T) {
	t.Parallel()
	dep := func(n int, state placement.DependencyState) placement.Dependency {
		return placement.Dependency{SessionID: sid(n), State: state}
	}
	cases := []struct {
		name    string
		session func(s *placement.Session)
		input   func(in *placement.Input)
		details []string
	}{
		{name: "starts_at not reached", session: func(s *placement.Session) { s.StartsAt = t0.Add(48 * time.Hour) },
			details: []string{"starts_at 2025-03-03T12:00:00Z is not reached"}},
		{name: "dependencies: every one that has not succeeded, by id", session: func(s *placement.Session) {
			s.Dependencies = []placement.Dependency{dep(9, placement.DependencyUnknown), dep(7, placement.DependencySucceeded),
				dep(8, placement.DependencyFailed), dep(6, placement.DependencyUnfinished)}
		}, details: []string{
			"dependency 0195a0c0-0000-7000-8000-000000000006 has not finished",
			"dependency 0195a0c0-0000-7000-8000-000000000008 did not finish successfully",
			"dependency 0195a0c0-0000-7000-8000-000000000009 does not exist",
		}},
		{name: "unknown resource group", session: func(s *placement.Session) { s.ResourceGroup = "nope" },
			details: []string{`resource group "nope" does not exist`}},
		{name: "inactive resource group", input: func(in *placement.Input) { in.Groups[0].Inactive = true },
			details: []string{`resource group "default" is not active`}},
		{name: "resource group not allowed", input: func(in *placement.Input) {
			in.Groups[0].Access = &placement.Access{Domains: []string{"other"}, Projects: []string{"p2"}, AccessKeys: []string{"AK2"}}
		}, details: []string{`resource group "default" is not allowed for this session's domain, project or keypair`}},
		{name: "resource group allowed by project", input: func(in *placement.Input) {
			in.Groups[0].Access = &placement.Access{Projects: []string{"p1"}}
		}},
		{name: "concurrency", input: func(in *placement.Input) {
			in.Quotas.Keypairs = map[string]placement.KeypairUsage{"AK1": {MaxConcurrentSessions: 2, ConcurrentSessions: 2}}
		}, details: []string{"keypair AK1: max_concurrent_sessions 2 reached"}},
		{name: "every quota level, naming the slot", input: func(in *placement.Input) {
			in.Quotas = placement.Quotas{
				Keypairs: map[string]placement.KeypairUsage{"AK1": {Usage: placement.Usage{Limits: cpuMem(4, 64), Occupied: cpuMem(3, 0)}}},
				Users:    map[string]placement.Usage{"u1": {Limits: domain.Slots{domain.SlotMem: gib(8)}, Occupied: cpuMem(0, 7)}},
				Projects: map[string]placement.Usage{"p1": {Limits: domain.Slots{domain.SlotCPU: domain.Units(100)}, Unspecified: placement.UnspecifiedLimited}},
				Domains:  map[string]placement.Usage{"d1": {Limits: domain.Slots{domain.SlotCUDAShares: domain.Units(1)}, Occupied: cpuMem(50, 500)}},
			}
		}, details: []string{
			"keypair AK1: total_resource_slots cpu limit 4 exceeded (requested 2)",
			"user u1: total_resource_slots mem limit 8G exceeded (requested 2G)",
			"project p1: total_resource_slots mem limit 0 exceeded (requested 2G)",
		}},
		{name: "a limit exactly reached still fits", input: func(in *placement.Input) {
			in.Quotas.Keypairs = map[string]placement.KeypairUsage{"AK1": {Usage: placement.Usage{Limits: cpuMem(4, 4), Occupied: cpuMem(2, 2)}}}
		}},
		{name: "mutually exclusive accelerators", session: func(s *placement.Session) {
			s.Kernels[0].Slots[domain.SlotCUDADevice] = domain.Units(1)
			s.Kernels[0].Slots[domain.SlotCUDAShares] = q("0.5")
		}, details: []string{"invalid request: kernel 0: cuda.device, cuda.shares are mutually exclusive"}},
		{name: "shares finer than 0.01", session: func(s *placement.Session) { s.Kernels[0].Slots[domain.SlotCUDAShares] = q("0.005") },
			details: []string{"invalid request: kernel 0: cuda.shares: 0.005 is not a multiple of 0.01"}},
		{name: "a MIG profile takes exactly 1", session: func(s *placement.Session) { s.Kernels[0].Slots[placement.MIGSlot("1g.10gb")] = domain.Units(2) },
			details: []string{"invalid request: kernel 0: cuda.device:1g.10gb-mig: a MIG profile takes exactly 1, not 2"}},
		{name: "no kernels", session: func(s *placement.Session) { s.Kernels = nil }, details: []string{"invalid request: no kernels"}},
		{name: "every failed check at once, with the lack of room", session: func(s *placement.Session) {
			s.StartsAt = t0.Add(48 * time.Hour)
			s.Dependencies = []placement.Dependency{dep(6, placement.DependencyUnfinished)}
			s.Kernels[0].Slots[domain.SlotCPU] = domain.Units(64)
		}, input: func(in *placement.Input) {
			in.Quotas.Domains = map[string]placement.Usage{"d1": {Limits: cpuMem(32, 64)}}
		}, details: []string{
			"starts_at 2025-03-03T12:00:00Z is not reached",
			"dependency 0195a0c0-0000-7000-8000-000000000006 has not finished",
			"domain d1: total_resource_slots cpu limit 32 exceeded (requested 64)",
			"cpu: requested 64 exceeds the capacity of every agent",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := sess(1, cpuMem(2, 2), 1)
			if c.session != nil {
				c.session(&s)
			}
			in := grouped(placement.ResourceGroup{}, []placement.Session{s}, gpuAgent("a1", 16, 64))
			if c.input != nil {
				c.input(&in)
			}
			r := place(t, in)
			if len(c.details) == 0 {
				if len(r.Placed) != 1 {
					t.Fatalf("not placed: %q", r.Unplaced[0].Details())
				}
				return
			}
			wantDetails(t, r, sid(1), domain.ReasonPredicateChecks, c.details...)
		})
	}
}

// TestPlacementsCountAgainstQuotasInTheRound: a round's placements use up
// the limits and the concurrency for the sessions after them.
func TestPlacementsCountAgainstQuotasInTheRound(t *testing.T) {
	t.Parallel()
	in := grouped(placement.ResourceGroup{Order: placement.OrderLIFO}, []placement.Session{
		sess(1, cpuMem(2, 1), 1), sess(2, cpuMem(2, 1), 1), sess(3, cpuMem(2, 1), 1),
		withKey(sess(4, cpuMem(1, 1), 1), "AK2"), withKey(sess(5, cpuMem(1, 1), 1), "AK2"),
	}, gpuAgent("a1", 64, 64))
	in.Quotas = placement.Quotas{
		Keypairs: map[string]placement.KeypairUsage{"AK2": {MaxConcurrentSessions: 2, ConcurrentSessions: 1}},
		Users:    map[string]placement.Usage{"u1": {Limits: domain.Slots{domain.SlotCPU: domain.Units(5)}}},
	}
	r := place(t, in)
	// Newest first: 5 (u1 has 1 cpu), 4 (AK2 has 2 sessions), 3 (3 cpus),
	// 2 (5 cpus: the limit), 1.
	if !slices.Equal(order(r), []uuid.UUID{sid(5), sid(3), sid(2)}) {
		t.Fatalf("placed %v", order(r))
	}
	wantDetails(t, r, sid(4), domain.ReasonPredicateChecks, "keypair AK2: max_concurrent_sessions 2 reached")
	wantDetails(t, r, sid(1), domain.ReasonPredicateChecks, "user u1: total_resource_slots cpu limit 5 exceeded (requested 2)")
}

func TestMalformedInputIsAnError(t *testing.T) {
	t.Parallel()
	twice := sess(1, cpuMem(1, 1), 1)
	cases := map[string]placement.Input{
		"two agents with one id":   ungrouped(nil, gpuAgent("a1", 1, 1), gpuAgent("a1", 2, 2)),
		"two devices with one id":  ungrouped(nil, gpuAgent("a1", 1, 1, "1"), gpuAgent("a1-bis", 1, 1, "1")),
		"two sessions with one id": ungrouped([]placement.Session{twice, twice}),
		"two groups with one name": {Groups: []placement.ResourceGroup{{Name: "g"}, {Name: "g"}}},
		"an unknown order":         {Groups: []placement.ResourceGroup{{Name: "g", Order: "random"}}},
		"an unknown selector":      {Ungrouped: placement.ResourceGroup{Selector: "best"}},
		"a negative cursor":        {Ungrouped: placement.ResourceGroup{RoundRobinNext: -1}},
	}
	cases["two devices with one id"].Agents[1].Devices[0].ID = "GPU-a1-0"
	for name, in := range cases {
		if _, err := placement.Place(in); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid-input error", name, err)
		}
	}
}
