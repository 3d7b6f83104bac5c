package quota_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/google/uuid"
)

// limits builds a Limits: keypair AK1 (and AK2, both u1's, AK1 main)
// under policy p, project default/ml and domain default with the totals.
func limits(p domain.KeypairPolicySpec, project, dom domain.Slots) *quota.Limits {
	l := quota.NewLimits()
	user := uuid.MustParse("0195a0c0-0000-7000-8000-000000000001")
	l.ApplyKeypairPolicy("p", domain.KeypairPolicyCreated{Name: "p", KeypairPolicySpec: p, At: t0})
	l.ApplyKeypair("AK1", domain.KeypairIssued{AccessKey: "AK1", UserID: user, Domain: "default", ResourcePolicy: "p", At: t0})
	l.ApplyKeypair("AK2", domain.KeypairIssued{AccessKey: "AK2", UserID: user, Domain: "default", ResourcePolicy: "p", At: t0})
	l.ApplyUser(user.String(), domain.UserMainKeypairSet{AccessKey: "AK1", At: t0})
	l.ApplyProject("", domain.ProjectCreated{Domain: "default", Name: "ml", TotalResourceSlots: project, At: t0})
	l.ApplyDomain("", domain.DomainCreated{Name: "default", TotalResourceSlots: dom, At: t0})
	return l
}

// mainUnlimited gives the user's main keypair AK1 an unlimited policy of
// its own, so that only AK2's policy limits.
func mainUnlimited(l *quota.Limits) *quota.Limits {
	l.ApplyKeypairPolicy("free", domain.KeypairPolicyCreated{Name: "free", KeypairPolicySpec: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}, At: t0})
	l.ApplyKeypair("AK1", domain.KeypairModified{ResourcePolicy: "free", At: t0})
	return l
}

const user1 = "0195a0c0-0000-7000-8000-000000000001"

func session(ak string, kernels int, total domain.Slots) quota.Session {
	return quota.Session{ID: uuid.New(), Owner: domain.Owner{UserID: user1, AccessKey: ak}, Domain: "default", Project: "ml", Kernels: kernels, Requested: total}
}

func TestLimitsFollowModifications(t *testing.T) {
	t.Parallel()
	l := limits(domain.KeypairPolicySpec{TotalResourceSlots: cpuMem(4, 8), DefaultForUnspecified: domain.UnspecifiedLimited}, nil, nil)
	if lim, ok := l.Of(quota.ScopeKeypair, "AK2"); !ok || lim.Slots[domain.SlotCPU] != domain.Units(4) {
		t.Fatalf("AK2: %+v %v", lim, ok)
	}
	l.ApplyKeypairPolicy("q", domain.KeypairPolicyCreated{Name: "q", KeypairPolicySpec: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}, At: t0})
	l.ApplyKeypair("AK2", domain.KeypairModified{ResourcePolicy: "q", At: t0})
	if lim, ok := l.Of(quota.ScopeKeypair, "AK2"); !ok || !lim.IsUnlimited() {
		t.Fatalf("AK2 after its policy changed: %+v %v", lim, ok)
	}
	l.ApplyKeypairPolicy("p", domain.KeypairPolicyModified{KeypairPolicySpec: domain.KeypairPolicySpec{TotalResourceSlots: cpuMem(1, 1)}, At: t0})
	if lim, ok := l.Of(quota.ScopeUser, user1); !ok || lim.Slots[domain.SlotCPU] != domain.Units(1) || lim.Unspecified != domain.UnspecifiedLimited {
		t.Fatalf("user (main keypair AK1, policy p modified): %+v %v", lim, ok)
	}
	if _, ok := l.Of(quota.ScopeProject, "default/ml"); ok {
		t.Fatal("a project without totals is limited")
	}
	l.ApplyProject("default/ml", domain.ProjectModified{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(9)}, At: t0})
	l.ApplyDomain("default", domain.DomainModified{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(10)}, At: t0})
	if lim, ok := l.Of(quota.ScopeProject, "default/ml"); !ok || lim.Slots[domain.SlotCPU] != domain.Units(9) {
		t.Fatalf("project: %+v %v", lim, ok)
	}
	if lim, ok := l.Of(quota.ScopeDomain, "default"); !ok || lim.Slots[domain.SlotCPU] != domain.Units(10) {
		t.Fatalf("domain: %+v %v", lim, ok)
	}
	if _, ok := l.Of(quota.ScopeKeypair, "nobody"); ok {
		t.Fatal("an unknown keypair is limited")
	}
}

func TestLimitDefaultForUnspecified(t *testing.T) {
	t.Parallel()
	named := domain.Slots{domain.SlotCPU: domain.Units(4)}
	for _, tc := range []struct {
		name    string
		limit   quota.Limit
		request domain.Slots
		over    []domain.SlotName
	}{
		{"limited: an unnamed slot is capped at 0", quota.KeypairLimit(domain.KeypairPolicySpec{TotalResourceSlots: named, DefaultForUnspecified: domain.UnspecifiedLimited}),
			cpuMem(1, 1), []domain.SlotName{domain.SlotMem}},
		{"unset means limited", quota.KeypairLimit(domain.KeypairPolicySpec{TotalResourceSlots: named}),
			cpuMem(1, 1), []domain.SlotName{domain.SlotMem}},
		{"unlimited: an unnamed slot is free", quota.KeypairLimit(domain.KeypairPolicySpec{TotalResourceSlots: named, DefaultForUnspecified: domain.UnspecifiedUnlimited}),
			cpuMem(1, 1000), nil},
		{"a named slot is capped either way", quota.KeypairLimit(domain.KeypairPolicySpec{TotalResourceSlots: named, DefaultForUnspecified: domain.UnspecifiedUnlimited}),
			cpuMem(5, 1), []domain.SlotName{domain.SlotCPU}},
		{"project and domain totals never limit unnamed slots", quota.TotalLimit(named), cpuMem(4, 1000), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []domain.SlotName
			for _, o := range tc.limit.Over(nil, tc.request) {
				got = append(got, o.Slot)
			}
			if !slices.Equal(got, tc.over) {
				t.Fatalf("over %v, want %v", got, tc.over)
			}
		})
	}
}

// TestViewCheck is one case per scheduling limit: each names its limit
// and subject, and every failure is reported together.
func TestViewCheck(t *testing.T) {
	t.Parallel()
	unlimited := domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}
	running := func(ak string, n int, each domain.Slots) quota.Snapshot {
		l := quota.NewLedger()
		for range n {
			id := uuid.New()
			l.ApplySession(id, requested(id, ak, user1, each))
			l.ApplyAgent(allocated(id, 0, each))
			l.ApplySession(id, domain.SessionScheduled{At: t0})
		}
		return l.Snapshot()
	}
	for _, tc := range []struct {
		name    string
		limits  *quota.Limits
		occ     quota.Snapshot
		session quota.Session
		want    []string
	}{
		{
			name:    "max_concurrent_sessions",
			limits:  limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 2, DefaultForUnspecified: domain.UnspecifiedUnlimited}, nil, nil),
			occ:     running("AK1", 2, cpuMem(1, 1)),
			session: session("AK1", 1, cpuMem(1, 1)),
			want:    []string{"keypair AK1: max_concurrent_sessions 2 reached"},
		},
		{
			name:    "keypair total_resource_slots",
			limits:  mainUnlimited(limits(domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(4)}, DefaultForUnspecified: domain.UnspecifiedUnlimited}, nil, nil)),
			occ:     running("AK2", 1, cpuMem(3, 1)),
			session: session("AK2", 1, cpuMem(2, 1)),
			want:    []string{"keypair AK2: total_resource_slots cpu: limit 4 would be exceeded (requested 2)"},
		},
		{
			name:    "user total_resource_slots (its main keypair's policy)",
			limits:  limits(domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(4)}, DefaultForUnspecified: domain.UnspecifiedUnlimited}, nil, nil),
			occ:     running("AK2", 1, cpuMem(3, 1)), // the user's other keypair: not this keypair's
			session: session("AK1", 1, cpuMem(4, 1)),
			want:    []string{"user " + user1 + ": total_resource_slots cpu: limit 4 would be exceeded (requested 4)"},
		},
		{
			name:    "keypair and user total_resource_slots together",
			limits:  limits(domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(4)}, DefaultForUnspecified: domain.UnspecifiedUnlimited}, nil, nil),
			occ:     running("AK1", 1, cpuMem(1, 1)),
			session: session("AK1", 1, cpuMem(4, 1)),
			want: []string{
				"keypair AK1: total_resource_slots cpu: limit 4 would be exceeded (requested 4)",
				"user " + user1 + ": total_resource_slots cpu: limit 4 would be exceeded (requested 4)",
			},
		},
		{
			name:    "a slot the keypair policy does not name, default_for_unspecified limited",
			limits:  limits(domain.KeypairPolicySpec{TotalResourceSlots: cpuMem(8, 8), DefaultForUnspecified: domain.UnspecifiedLimited}, nil, nil),
			session: session("AK2", 1, domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30), domain.SlotCUDAShares: domain.Units(1) / 2}),
			want: []string{
				"keypair AK2: total_resource_slots cuda.shares: not allowed (requested 0.5)",
				"user " + user1 + ": total_resource_slots cuda.shares: not allowed (requested 0.5)",
			},
		},
		{
			name:    "project total_resource_slots",
			limits:  limits(unlimited, domain.Slots{domain.SlotMem: domain.Units(8 << 30)}, nil),
			occ:     running("AK2", 1, cpuMem(1, 6)),
			session: session("AK1", 1, cpuMem(1, 4)),
			want:    []string{"project default/ml: total_resource_slots mem: limit 8G would be exceeded (requested 4G)"},
		},
		{
			name:    "domain total_resource_slots",
			limits:  limits(unlimited, nil, domain.Slots{domain.SlotCPU: domain.Units(2)}),
			occ:     running("AK2", 1, cpuMem(1, 1)),
			session: session("AK1", 1, cpuMem(2, 1)),
			want:    []string{"domain default: total_resource_slots cpu: limit 2 would be exceeded (requested 2)"},
		},
		{
			name: "every failure at once",
			limits: limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 1, TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(2)}, DefaultForUnspecified: domain.UnspecifiedUnlimited},
				domain.Slots{domain.SlotCPU: domain.Units(2)}, domain.Slots{domain.SlotMem: domain.Units(1 << 30)}),
			occ:     running("AK1", 1, cpuMem(1, 1)),
			session: session("AK1", 1, cpuMem(2, 1)),
			want: []string{
				"keypair AK1: max_concurrent_sessions 1 reached",
				"keypair AK1: total_resource_slots cpu: limit 2 would be exceeded (requested 2)",
				"user " + user1 + ": total_resource_slots cpu: limit 2 would be exceeded (requested 2)",
				"project default/ml: total_resource_slots cpu: limit 2 would be exceeded (requested 2)",
				"domain default: total_resource_slots mem: limit 1G would be exceeded (requested 1G)",
			},
		},
		{
			name:    "within every limit",
			limits:  limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 2, TotalResourceSlots: cpuMem(4, 4)}, cpuMem(4, 4), cpuMem(4, 4)),
			occ:     running("AK1", 1, cpuMem(2, 2)),
			session: session("AK1", 1, cpuMem(2, 2)),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.occ == nil {
				tc.occ = quota.Snapshot{}
			}
			v := quota.NewView(tc.limits, tc.occ, []quota.Session{tc.session})
			if got := quota.Details(v.Check(tc.session)); !slices.Equal(got, tc.want) && (len(got) > 0 || len(tc.want) > 0) {
				t.Fatalf("failures:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestViewChargeCountsTheRound: two sessions that each fit alone do not
// both pass once the first is charged.
func TestViewChargeCountsTheRound(t *testing.T) {
	t.Parallel()
	l := limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 5, TotalResourceSlots: cpuMem(4, 4)}, nil, nil)
	a, b := session("AK1", 1, cpuMem(3, 1)), session("AK2", 1, cpuMem(1, 1))
	c := session("AK1", 1, cpuMem(1, 1))
	v := quota.NewView(l, quota.Snapshot{}, []quota.Session{a, b, c})
	for _, s := range []quota.Session{a, b} {
		if f := v.Check(s); len(f) > 0 {
			t.Fatalf("%s: %v", s.Owner.AccessKey, quota.Details(f))
		}
		v.Charge(s)
	}
	// AK1 holds 3 cpu, the user (AK1 + AK2) 4: c fits its keypair, not its user.
	got := v.Check(c)
	if len(got) != 1 || got[0].Scope != quota.ScopeUser || got[0].Limit != quota.LimitTotalSlots || got[0].Slot != domain.SlotCPU {
		t.Fatalf("failures %+v", got)
	}
	if kp := v.Keypairs["AK1"]; kp.ConcurrentSessions != 1 || kp.Occupied[domain.SlotCPU] != domain.Units(3) {
		t.Fatalf("AK1 after the round: %+v", kp)
	}
}

// TestAdmit is one case per limit known at enqueue time; each error names
// its limit, with the kind the HTTP layer maps to 400 or 403.
func TestAdmit(t *testing.T) {
	t.Parallel()
	unlimited := domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxContainersPerSession: 8}
	with := func(f func(*domain.KeypairPolicySpec)) *domain.KeypairPolicySpec {
		p := unlimited
		f(&p)
		return &p
	}
	for _, tc := range []struct {
		name     string
		session  quota.Session
		standing quota.Standing
		kind     domain.Kind
		want     []string // limits named, in order
	}{
		{
			name:     "max_containers_per_session",
			session:  session("AK1", 3, cpuMem(3, 3)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) { p.MaxContainersPerSession = 2 })},
			kind:     domain.KindInvalid, want: []string{"cluster_size: 3 kernels exceed max_containers_per_session 2"},
		},
		{
			name:     "max_pending_session_count",
			session:  session("AK1", 1, cpuMem(1, 1)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) { p.MaxPendingSessionCount = 2 }), Pending: 2, PendingSlots: cpuMem(2, 2)},
			kind:     domain.KindQuotaExceeded, want: []string{"keypair AK1: max_pending_session_count 2 reached"},
		},
		{
			name:    "max_pending_session_resource_slots",
			session: session("AK1", 1, cpuMem(2, 1)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) {
				p.MaxPendingSessionResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			}), Pending: 1, PendingSlots: cpuMem(3, 100)},
			kind: domain.KindQuotaExceeded, want: []string{"keypair AK1: max_pending_session_resource_slots cpu: limit 4 would be exceeded (requested 2)"},
		},
		{
			name:    "keypair total_resource_slots, outright",
			session: session("AK2", 1, cpuMem(5, 1)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			})},
			kind: domain.KindQuotaExceeded, want: []string{"keypair AK2: total_resource_slots cpu: limit 4 would be exceeded (requested 5)"},
		},
		{
			name:    "user total_resource_slots (the main keypair's policy), outright",
			session: session("AK2", 1, cpuMem(5, 1)),
			standing: quota.Standing{Keypair: &unlimited, User: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			})},
			kind: domain.KindQuotaExceeded, want: []string{"user " + user1 + ": total_resource_slots cpu: limit 4 would be exceeded (requested 5)"},
		},
		{
			name:     "project total_resource_slots, outright",
			session:  session("AK1", 1, cpuMem(1, 9)),
			standing: quota.Standing{Project: domain.Slots{domain.SlotMem: domain.Units(8 << 30)}},
			kind:     domain.KindQuotaExceeded, want: []string{"project default/ml: total_resource_slots mem: limit 8G would be exceeded (requested 9G)"},
		},
		{
			name:     "domain total_resource_slots, outright",
			session:  session("AK1", 1, cpuMem(3, 1)),
			standing: quota.Standing{Domain: domain.Slots{domain.SlotCPU: domain.Units(2)}},
			kind:     domain.KindQuotaExceeded, want: []string{"domain default: total_resource_slots cpu: limit 2 would be exceeded (requested 3)"},
		},
		{
			name:    "every problem at once, the invalid one first",
			session: session("AK1", 3, cpuMem(6, 1)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) {
				p.MaxContainersPerSession, p.MaxPendingSessionCount = 1, 1
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			}), Pending: 1, Domain: domain.Slots{domain.SlotCPU: domain.Units(5)}},
			kind: domain.KindInvalid,
			want: []string{"max_containers_per_session", "max_pending_session_count", "keypair AK1: total_resource_slots cpu", "domain default: total_resource_slots cpu"},
		},
		{
			name:     "within every limit",
			session:  session("AK1", 2, cpuMem(2, 2)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) { p.MaxPendingSessionCount = 3 }), User: &unlimited, Pending: 2, Project: cpuMem(2, 2), Domain: cpuMem(2, 2)},
		},
		{
			name:    "no policy known: nothing to refuse",
			session: session("AK1", 200, cpuMem(200, 200)),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := quota.Admit(tc.session, tc.standing)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("admitted")
			}
			if k := domain.KindOf(err); k != tc.kind {
				t.Errorf("kind %s, want %s: %v", k, tc.kind, err)
			}
			msg, last := err.Error(), -1
			for _, w := range tc.want {
				i := strings.Index(msg, w)
				if i <= last {
					t.Fatalf("error %q does not name %q (in order)", msg, w)
				}
				last = i
			}
			if tc.kind == domain.KindQuotaExceeded {
				var ex *quota.Exceeded
				if !errors.As(err, &ex) || !strings.Contains(tc.want[0], ex.Limit) {
					t.Errorf("cause %+v does not name the limit of %q", ex, tc.want[0])
				}
			}
		})
	}
}
