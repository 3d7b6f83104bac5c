package quota_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/google/uuid"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func cpuMem(cpu, memGiB int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: domain.Units(memGiB << 30)}
}

// requested is a session.requested of owner ak/user in default/ml with
// one kernel per slots.
func requested(id uuid.UUID, ak, user string, kernels ...domain.Slots) domain.SessionRequested {
	e := domain.SessionRequested{
		SessionID: id, Name: "s", Owner: domain.Owner{UserID: user, AccessKey: ak},
		Domain: "default", Project: "ml", ResourceGroup: "default", Type: domain.SessionBatch,
		Image: "img", Priority: 10, ClusterMode: domain.ClusterSingleNode, At: t0,
	}
	for i, s := range kernels {
		role := domain.KernelSub
		if i == 0 {
			role = domain.KernelMain
		}
		e.Kernels = append(e.Kernels, domain.KernelSpec{KernelID: kernelID(id, i), Role: role, Slots: s})
	}
	return e
}

func kernelID(session uuid.UUID, i int) uuid.UUID {
	return uuid.NewSHA1(session, []byte(fmt.Sprint(i)))
}

func allocated(session uuid.UUID, i int, slots domain.Slots) domain.AgentAllocated {
	return domain.AgentAllocated{KernelID: kernelID(session, i), SessionID: session, Slots: slots, At: t0}
}

func released(session uuid.UUID, i int) domain.AgentReleased {
	return domain.AgentReleased{KernelID: kernelID(session, i), SessionID: session, Reason: "x", At: t0}
}

// step is one event of a session or an agent stream.
type step struct {
	session uuid.UUID // uuid.Nil: an agent event
	ev      domain.Event
}

func fold(steps ...step) *quota.Ledger {
	l := quota.NewLedger()
	for _, s := range steps {
		if s.session == uuid.Nil {
			l.ApplyAgent(s.ev)
		} else {
			l.ApplySession(s.session, s.ev)
		}
	}
	return l
}

func TestLedgerOccupancyFollowsAllocationsAndSessions(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	two := cpuMem(2, 4)
	scheduled := domain.SessionScheduled{Reason: domain.ReasonScheduled, At: t0}
	for _, tc := range []struct {
		name  string
		steps []step
		want  map[quota.Scope]map[string]quota.Occupancy
	}{
		{
			name:  "a requested session is pending with what it asks",
			steps: []step{{a, requested(a, "AK1", "u1", two, two)}},
			want:  everyScope("AK1", "u1", quota.Occupancy{Pending: 1, PendingSlots: cpuMem(4, 8)}),
		},
		{
			name: "a scheduled session is concurrent and occupies its allocations",
			steps: []step{
				{a, requested(a, "AK1", "u1", two, two)},
				{uuid.Nil, allocated(a, 0, two)}, {uuid.Nil, allocated(a, 1, two)},
				{a, scheduled},
			},
			want: everyScope("AK1", "u1", quota.Occupancy{Concurrent: 1, Occupied: cpuMem(4, 8)}),
		},
		{
			name: "a kernel released while its session runs gives its slots back",
			steps: []step{
				{a, requested(a, "AK1", "u1", two, two)},
				{uuid.Nil, allocated(a, 0, two)}, {uuid.Nil, allocated(a, 1, two)},
				{a, scheduled},
				{uuid.Nil, released(a, 1)},
			},
			want: everyScope("AK1", "u1", quota.Occupancy{Concurrent: 1, Occupied: two}),
		},
		{
			name: "an ended session occupies what is not yet released, and is no longer concurrent",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{uuid.Nil, allocated(a, 0, two)},
				{a, scheduled},
				{a, domain.SessionErrored{Reason: domain.ReasonAgentLost, At: t0}},
			},
			want: everyScope("AK1", "u1", quota.Occupancy{Occupied: two}),
		},
		{
			name: "released after its end, a session occupies nothing",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{uuid.Nil, allocated(a, 0, two)},
				{a, scheduled},
				{a, domain.SessionTerminated{Reason: domain.ReasonForceTerminated, At: t0}},
				{uuid.Nil, released(a, 0)},
			},
			want: nil,
		},
		{
			name: "a cancelled session leaves the queue",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{a, domain.SessionCancelled{Reason: domain.ReasonPendingTimeout, At: t0}},
			},
			want: nil,
		},
		{
			name: "an allocation made before session.scheduled counts at once (the session is still pending)",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{uuid.Nil, allocated(a, 0, two)},
			},
			want: everyScope("AK1", "u1", quota.Occupancy{Pending: 1, PendingSlots: two, Occupied: two}),
		},
		{
			name: "a repeated allocation or release changes nothing",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{uuid.Nil, allocated(a, 0, two)}, {uuid.Nil, allocated(a, 0, two)},
				{a, scheduled},
				{uuid.Nil, released(a, 0)}, {uuid.Nil, released(a, 0)},
				{uuid.Nil, allocated(b, 0, two)}, // a session never requested: no one's
			},
			want: everyScope("AK1", "u1", quota.Occupancy{Concurrent: 1}),
		},
		{
			name: "two keypairs of one user add up for the user, project and domain",
			steps: []step{
				{a, requested(a, "AK1", "u1", two)},
				{b, requested(b, "AK2", "u1", two)},
				{uuid.Nil, allocated(a, 0, two)},
				{a, scheduled},
			},
			want: map[quota.Scope]map[string]quota.Occupancy{
				quota.ScopeKeypair: {
					"AK1": {Concurrent: 1, Occupied: two},
					"AK2": {Pending: 1, PendingSlots: two},
				},
				quota.ScopeUser:    {"u1": {Concurrent: 1, Occupied: two, Pending: 1, PendingSlots: two}},
				quota.ScopeProject: {"default/ml": {Concurrent: 1, Occupied: two, Pending: 1, PendingSlots: two}},
				quota.ScopeDomain:  {"default": {Concurrent: 1, Occupied: two, Pending: 1, PendingSlots: two}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := fold(tc.steps...)
			got := l.Snapshot()
			checkHeld(t, l, got)
			for _, scope := range quota.Scopes {
				want := tc.want[scope]
				if want == nil {
					want = map[string]quota.Occupancy{}
				}
				if !reflect.DeepEqual(got[scope], want) {
					t.Errorf("%s: got %+v, want %+v", scope, got[scope], want)
				}
			}
		})
	}
}

// checkHeld: the running totals (Held) agree with the sums (Snapshot) on
// what every subject holds, and a subject the snapshot does not name
// holds nothing.
func checkHeld(t *testing.T, l *quota.Ledger, snap quota.Snapshot) {
	t.Helper()
	for _, scope := range quota.Scopes {
		for key, o := range snap[scope] {
			want := quota.Occupancy{Occupied: o.Occupied, Concurrent: o.Concurrent}
			if got := l.Held(scope, key); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: held %+v, snapshot %+v", scope, key, got, want)
			}
		}
		if got := l.Held(scope, "nobody"); !got.IsZero() {
			t.Errorf("%s nobody: held %+v", scope, got)
		}
	}
}

// everyScope is the same occupancy for keypair ak, user, default/ml and
// default.
func everyScope(ak, user string, o quota.Occupancy) map[quota.Scope]map[string]quota.Occupancy {
	return map[quota.Scope]map[string]quota.Occupancy{
		quota.ScopeKeypair: {ak: o}, quota.ScopeUser: {user: o},
		quota.ScopeProject: {"default/ml": o}, quota.ScopeDomain: {"default": o},
	}
}

func TestLedgerForgetsEndedSessions(t *testing.T) {
	t.Parallel()
	l := quota.NewLedger()
	for i := range 100 {
		id := uuid.New()
		l.ApplySession(id, requested(id, "AK1", "u1", cpuMem(1, 1)))
		l.ApplyAgent(allocated(id, 0, cpuMem(1, 1)))
		l.ApplySession(id, domain.SessionScheduled{At: t0})
		if i%2 == 0 {
			l.ApplyAgent(released(id, 0))
			l.ApplySession(id, domain.SessionTerminated{Reason: domain.ReasonTaskFinished, At: t0})
		} else {
			l.ApplySession(id, domain.SessionTerminated{Reason: domain.ReasonTaskFinished, At: t0})
			l.ApplyAgent(released(id, 0))
		}
		if _, ok := l.Session(id); ok {
			t.Fatalf("session %d still known after its end and release", i)
		}
	}
	if n := l.LiveAllocations(); n != 0 {
		t.Fatalf("%d live allocations", n)
	}
	if snap := l.Snapshot(); len(snap[quota.ScopeKeypair]) != 0 {
		t.Fatalf("snapshot %+v", snap)
	}
	for _, scope := range quota.Scopes {
		if key := map[quota.Scope]string{quota.ScopeKeypair: "AK1", quota.ScopeUser: "u1", quota.ScopeProject: "default/ml", quota.ScopeDomain: "default"}[scope]; !l.Held(scope, key).IsZero() {
			t.Fatalf("%s %s still holds %+v", scope, key, l.Held(scope, key))
		}
	}
}

func BenchmarkLedgerSnapshot(b *testing.B) {
	l := quota.NewLedger()
	for i := range 10_000 {
		id := uuid.New()
		ak := fmt.Sprintf("AK%d", i%200)
		l.ApplySession(id, requested(id, ak, fmt.Sprintf("u%d", i%100), cpuMem(1, 1)))
		if i%4 != 0 {
			l.ApplyAgent(allocated(id, 0, cpuMem(1, 1)))
			l.ApplySession(id, domain.SessionScheduled{At: t0})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Snapshot()
	}
}

// BenchmarkView is the quota work of one scheduling round: the snapshot
// of 10,000 sessions and the view of the 2,500 pending ones' subjects.
func BenchmarkView(b *testing.B) {
	l, limits := quota.NewLedger(), quota.NewLimits()
	var pending []quota.Session
	for i := range 10_000 {
		id := uuid.New()
		ak := fmt.Sprintf("AK%d", i%200)
		e := requested(id, ak, fmt.Sprintf("u%d", i%100), cpuMem(1, 1))
		l.ApplySession(id, e)
		if i%4 == 0 {
			pending = append(pending, quota.SessionOf(e))
			continue
		}
		l.ApplyAgent(allocated(id, 0, cpuMem(1, 1)))
		l.ApplySession(id, domain.SessionScheduled{At: t0})
	}
	b.ReportAllocs()
	for b.Loop() {
		quota.View(limits, l.Snapshot(), pending)
	}
}
