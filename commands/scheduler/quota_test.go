package scheduler_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/managertest"
	"github.com/google/uuid"
)

// TestQuotasAtScheduling is one test per limit the scheduler enforces:
// a first session is placed, a second one that would take its subject
// over the limit waits with predicate-checks-failed and a reason naming
// the limit exactly, and is placed once the first one ends and gives its
// slots back.
func TestQuotasAtScheduling(t *testing.T) {
	t.Parallel()
	unlimited := domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}
	cpu4 := domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(4)}, DefaultForUnspecified: domain.UnspecifiedUnlimited}
	for _, tc := range []struct {
		name   string
		tenant managertest.TenantSpec
		// first and second name the keypair each session uses.
		first, second func(managertest.Tenant) string
		want          func(managertest.Tenant) string
	}{
		{
			name:   "keypair max_concurrent_sessions",
			tenant: managertest.TenantSpec{MainPolicy: domain.KeypairPolicySpec{MaxConcurrentSessions: 1, DefaultForUnspecified: domain.UnspecifiedUnlimited}, OtherPolicy: unlimited},
			first:  mainKey, second: mainKey,
			want: func(tn managertest.Tenant) string {
				return "keypair " + tn.Main + ": max_concurrent_sessions 1 reached"
			},
		},
		{
			name:   "keypair total_resource_slots",
			tenant: managertest.TenantSpec{MainPolicy: unlimited, OtherPolicy: cpu4},
			first:  otherKey, second: otherKey,
			want: func(tn managertest.Tenant) string {
				return "keypair " + tn.Other + ": total_resource_slots cpu limit 4 exceeded (requested 2)"
			},
		},
		{
			name:   "user total_resource_slots (its main keypair's policy), reached through another keypair",
			tenant: managertest.TenantSpec{MainPolicy: cpu4, OtherPolicy: unlimited},
			first:  otherKey, second: otherKey,
			want: func(tn managertest.Tenant) string {
				return "user " + tn.UserID.String() + ": total_resource_slots cpu limit 4 exceeded (requested 2)"
			},
		},
		{
			name:   "project total_resource_slots",
			tenant: managertest.TenantSpec{MainPolicy: unlimited, OtherPolicy: unlimited, ProjectTotal: domain.Slots{domain.SlotCPU: domain.Units(4)}},
			first:  mainKey, second: otherKey,
			want: func(managertest.Tenant) string {
				return "project acme/ml: total_resource_slots cpu limit 4 exceeded (requested 2)"
			},
		},
		{
			name:   "domain total_resource_slots",
			tenant: managertest.TenantSpec{MainPolicy: unlimited, OtherPolicy: unlimited, DomainTotal: domain.Slots{domain.SlotCPU: domain.Units(4)}},
			first:  mainKey, second: otherKey,
			want: func(managertest.Tenant) string {
				return "domain acme: total_resource_slots cpu limit 4 exceeded (requested 2)"
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tn := e.Tenant(tc.tenant)
			e.RegisterAgent(agentSpec("a1", 32, 64, 0))
			e.start(scheduler.Config{})

			first := e.Request(tn.Session(tc.first(tn), 1, cpuMem(3, 1))).SessionID
			e.AwaitStatus(first, domain.StatusScheduled)
			second := e.Request(tn.Session(tc.second(tn), 1, cpuMem(2, 1))).SessionID
			s := e.awaitReason(second)
			if s.StatusReason() != domain.ReasonPredicateChecks || !slices.Equal(s.PendingDetails(), []string{tc.want(tn)}) {
				t.Fatalf("waits with %s %q, want %s [%s]", s.StatusReason(), s.PendingDetails(), domain.ReasonPredicateChecks, tc.want(tn))
			}
			e.end(first)
			e.AwaitStatus(second, domain.StatusScheduled)
		})
	}
}

func mainKey(tn managertest.Tenant) string  { return tn.Main }
func otherKey(tn managertest.Tenant) string { return tn.Other }

// awaitReason waits until a session has a pending reason and returns it.
func (e *env) awaitReason(id uuid.UUID) *domain.Session {
	e.T.Helper()
	e.Await("session "+id.String()+" has a pending reason", func() bool { return e.Session(id).StatusReason() != "" })
	return e.Session(id)
}

// TestQuotasReportEveryFailureAndCountTheRound: sessions requested
// together are checked against each other's placements in one round, and
// a session failing several checks shows them all; a waiting session
// records its reasons once.
func TestQuotasReportEveryFailureAndCountTheRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := e.Tenant(managertest.TenantSpec{
		MainPolicy: domain.KeypairPolicySpec{
			MaxConcurrentSessions: 2, TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(4)},
			DefaultForUnspecified: domain.UnspecifiedUnlimited,
		},
		OtherPolicy: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited},
		DomainTotal: domain.Slots{domain.SlotMem: domain.Units(3 << 30)},
	})
	e.RegisterAgent(agentSpec("a1", 32, 64, 0))
	// Three sessions arrive before the scheduler starts: they meet in its
	// first round.
	var ids []uuid.UUID
	for range 3 {
		ids = append(ids, e.Request(tn.Session(tn.Main, 1, cpuMem(2, 1))).SessionID)
	}
	e.start(scheduler.Config{})
	e.AwaitStatus(ids[0], domain.StatusScheduled)
	e.AwaitStatus(ids[1], domain.StatusScheduled)
	s := e.awaitReason(ids[2])
	want := []string{
		"keypair " + tn.Main + ": max_concurrent_sessions 2 reached",
		"keypair " + tn.Main + ": total_resource_slots cpu limit 4 exceeded (requested 2)",
		"user " + tn.UserID.String() + ": total_resource_slots cpu limit 4 exceeded (requested 2)",
	}
	if !slices.Equal(s.PendingDetails(), want) {
		t.Fatalf("details:\n  %s\nwant:\n  %s", strings.Join(s.PendingDetails(), "\n  "), strings.Join(want, "\n  "))
	}

	// A fourth through the other keypair, unlimited itself: its user's
	// cpu (the main keypair's policy) and the domain's memory (3G, 2G
	// held) stop it.
	fourth := e.Request(tn.Session(tn.Other, 1, cpuMem(1, 2))).SessionID
	if s := e.awaitReason(fourth); !slices.Equal(s.PendingDetails(), []string{
		"user " + tn.UserID.String() + ": total_resource_slots cpu limit 4 exceeded (requested 1)",
		"domain acme: total_resource_slots mem limit 3G exceeded (requested 2G)",
	}) {
		t.Fatalf("fourth: %q", s.PendingDetails())
	}
	// The fourth's round checked the third again: same reasons, no event.
	if n := e.Count(domain.SessionStream(ids[2]).String(), domain.TypeSessionPendingUpdated); n != 1 {
		t.Fatalf("%d pending-updated events for a session waiting for the same reasons", n)
	}
	e.end(ids[1])
	e.AwaitStatus(ids[2], domain.StatusScheduled)
	s = e.awaitReason(fourth)
	if s.Status() != domain.StatusPending {
		t.Fatalf("fourth is %s; the domain's memory is full again", s.Status())
	}
}
