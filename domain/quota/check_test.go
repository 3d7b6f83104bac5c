package quota_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
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

// running is the occupancy of n sessions of ak, each scheduled with each.
func running(ak string, n int, each domain.Slots) quota.Snapshot {
	l := quota.NewLedger()
	for range n {
		id := uuid.New()
		l.ApplySession(id, requested(id, ak, user1, each))
		l.ApplyAgent(allocated(id, 0, each))
		l.ApplySession(id, domain.SessionScheduled{At: t0})
	}
	return l.Snapshot()
}

// TestViewBuildsPlacementQuotas: the view has every pending session's
// keypair (limited by its policy, or not at all), and the users, projects
// (by project key) and domains that have limits, with what each occupies.
func TestViewBuildsPlacementQuotas(t *testing.T) {
	t.Parallel()
	l := mainUnlimited(limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 3, TotalResourceSlots: cpuMem(4, 4)}, domain.Slots{domain.SlotCPU: domain.Units(9)}, nil))
	occ := running("AK2", 2, cpuMem(1, 1))
	v := quota.View(l, occ, []quota.Session{session("AK2", 1, cpuMem(1, 1)), session("AK9", 1, cpuMem(1, 1))})

	ak2 := v.Keypairs["AK2"]
	if ak2.MaxConcurrentSessions != 3 || ak2.ConcurrentSessions != 2 || ak2.Unspecified != placement.UnspecifiedLimited ||
		ak2.Limits[domain.SlotCPU] != domain.Units(4) || ak2.Occupied[domain.SlotCPU] != domain.Units(2) {
		t.Errorf("AK2: %+v", ak2)
	}
	if ak9, ok := v.Keypairs["AK9"]; !ok || ak9.Unspecified != placement.UnspecifiedUnlimited || len(ak9.Limits) != 0 || ak9.MaxConcurrentSessions != 0 {
		t.Errorf("AK9 (no keypair known): %+v %v", ak9, ok)
	}
	if u, ok := v.Users[user1]; !ok || u.Unspecified != placement.UnspecifiedUnlimited || u.Occupied[domain.SlotCPU] != domain.Units(2) {
		t.Errorf("user (main keypair AK1, unlimited policy): %+v %v", u, ok)
	}
	if p, ok := v.Projects["default/ml"]; !ok || p.Limits[domain.SlotCPU] != domain.Units(9) || p.Unspecified != placement.UnspecifiedUnlimited ||
		p.Occupied[domain.SlotMem] != domain.Units(2<<30) {
		t.Errorf("project: %+v %v", p, ok)
	}
	if d, ok := v.Domains["default"]; ok {
		t.Errorf("a domain without totals is in the view: %+v", d)
	}
}

// TestViewThroughPlacement runs placement over the view: every limit is
// found under the keys placement looks up (the project key included), and
// a session failing several shows them all, naming each limit.
func TestViewThroughPlacement(t *testing.T) {
	t.Parallel()
	l := limits(domain.KeypairPolicySpec{MaxConcurrentSessions: 1, TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(2)}, DefaultForUnspecified: domain.UnspecifiedUnlimited},
		domain.Slots{domain.SlotCPU: domain.Units(2)}, domain.Slots{domain.SlotMem: domain.Units(1 << 30)})
	occ := running("AK1", 1, cpuMem(1, 1))
	s := session("AK1", 1, cpuMem(2, 1))
	in := placement.Input{
		Now: t0, Ungrouped: placement.ResourceGroup{},
		Agents: []placement.Agent{{ID: "a1", Architecture: "x86_64", Schedulable: true, Capacity: cpuMem(64, 64)}},
		Sessions: []placement.Session{{
			ID: s.ID, AccessKey: s.Owner.AccessKey, UserID: s.Owner.UserID, Project: s.Key(quota.ScopeProject), Domain: s.Domain,
			Priority: 10, EnqueuedAt: t0, ClusterMode: domain.ClusterSingleNode,
			Kernels: []placement.Kernel{{ID: uuid.New(), Slots: s.Requested}},
		}},
		Quotas: quota.View(l, occ, []quota.Session{s}),
	}
	res, err := placement.Place(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unplaced) != 1 {
		t.Fatalf("placed %+v", res.Placed)
	}
	want := []string{
		"keypair AK1: max_concurrent_sessions 1 reached",
		"keypair AK1: total_resource_slots cpu limit 2 exceeded (requested 2)",
		"user " + user1 + ": total_resource_slots cpu limit 2 exceeded (requested 2)",
		"project default/ml: total_resource_slots cpu limit 2 exceeded (requested 2)",
		"domain default: total_resource_slots mem limit 1G exceeded (requested 1G)",
	}
	u := res.Unplaced[0]
	if u.Reason != domain.ReasonPredicateChecks || !slices.Equal(u.Details(), want) {
		t.Fatalf("%s:\n  %s\nwant:\n  %s", u.Reason, strings.Join(u.Details(), "\n  "), strings.Join(want, "\n  "))
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
			kind: domain.KindQuotaExceeded, want: []string{"keypair AK1: max_pending_session_resource_slots cpu limit 4 exceeded (requested 2)"},
		},
		{
			name:    "keypair total_resource_slots, outright",
			session: session("AK2", 1, cpuMem(5, 1)),
			standing: quota.Standing{Keypair: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			})},
			kind: domain.KindQuotaExceeded, want: []string{"keypair AK2: total_resource_slots cpu limit 4 exceeded (requested 5)"},
		},
		{
			name:    "user total_resource_slots (the main keypair's policy), outright",
			session: session("AK2", 1, cpuMem(5, 1)),
			standing: quota.Standing{Keypair: &unlimited, User: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			})},
			kind: domain.KindQuotaExceeded, want: []string{"user " + user1 + ": total_resource_slots cpu limit 4 exceeded (requested 5)"},
		},
		{
			name:     "project total_resource_slots, outright",
			session:  session("AK1", 1, cpuMem(1, 9)),
			standing: quota.Standing{Project: domain.Slots{domain.SlotMem: domain.Units(8 << 30)}},
			kind:     domain.KindQuotaExceeded, want: []string{"project default/ml: total_resource_slots mem limit 8G exceeded (requested 9G)"},
		},
		{
			name:     "domain total_resource_slots, outright",
			session:  session("AK1", 1, cpuMem(3, 1)),
			standing: quota.Standing{Domain: domain.Slots{domain.SlotCPU: domain.Units(2)}},
			kind:     domain.KindQuotaExceeded, want: []string{"domain default: total_resource_slots cpu limit 2 exceeded (requested 3)"},
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
