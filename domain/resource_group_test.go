package domain

import (
	"strings"
	"testing"
)

func TestResourceGroup(t *testing.T) {
	base := resourceGroupCreated()
	granted := ResourceGroupAccessGranted{Grantee: Grantee{GranteeDomain, "acme"}, At: at(1)}
	runCases(t, RehydrateResourceGroup, []aggCase[*ResourceGroup]{
		{
			name: "defaults: active, fifo, dispersed, interactive and batch",
			when: func(r *ResourceGroup) ([]Event, error) {
				return r.Create("gpu", ResourceGroupSpec{IsPublic: true}, at(0))
			},
			then: []Event{base},
			check: func(t *testing.T, r *ResourceGroup) {
				if !r.IsActive() || r.Name() != "gpu" || len(r.AccessList()) != 0 || r.MayUse(SessionBatch, "acme", "ml", accessKeyA) {
					t.Fatalf("%+v", r)
				}
			},
		},
		{
			name: "session types in canonical order",
			when: func(r *ResourceGroup) ([]Event, error) {
				return r.Create("inf", ResourceGroupSpec{AllowedSessionTypes: []SessionType{SessionInference, SessionBatch, SessionInference},
					SchedulerOrder: OrderDRF, AgentSelector: SelectorConcentrated, PendingTimeout: 600, AllowFractionalFragmentation: true}, at(0))
			},
			then: []Event{ResourceGroupCreated{Name: "inf", ResourceGroupSpec: ResourceGroupSpec{IsActive: true,
				AllowedSessionTypes: []SessionType{SessionBatch, SessionInference}, SchedulerOrder: OrderDRF, AgentSelector: SelectorConcentrated,
				PendingTimeout: 600, AllowFractionalFragmentation: true}, At: at(0)}},
		},
		{
			name: "every problem at once",
			when: func(r *ResourceGroup) ([]Event, error) {
				return r.Create("", ResourceGroupSpec{Description: strings.Repeat("x", 2000), AllowedSessionTypes: []SessionType{"cron"},
					PendingTimeout: -1, SchedulerOrder: "random", AgentSelector: "best", FIFOSkipAfter: -1}, at(0))
			},
			err:    ErrInvalid,
			fields: []string{"name", "description", "allowed_session_types", "pending_timeout", "scheduler", "agent_selector", "fifo_skip_after"},
		},
		{name: "the name is taken", given: []Event{base}, when: func(r *ResourceGroup) ([]Event, error) { return r.Create("gpu", ResourceGroupSpec{}, at(0)) }, err: ErrConflict},
		{
			name:  "modified: lifo, skip after 3, inactive",
			given: []Event{base},
			when: func(r *ResourceGroup) ([]Event, error) {
				return r.Modify(ResourceGroupChanges{SchedulerOrder: ptr(OrderLIFO), FIFOSkipAfter: ptr(3), IsActive: ptr(false)}, at(2))
			},
			then: []Event{func() ResourceGroupModified {
				s := base.ResourceGroupSpec.clone()
				s.SchedulerOrder, s.FIFOSkipAfter, s.IsActive = OrderLIFO, 3, false
				return ResourceGroupModified{ResourceGroupSpec: s, At: at(2)}
			}()},
		},
		{name: "no change", given: []Event{base}, when: func(r *ResourceGroup) ([]Event, error) {
			return r.Modify(ResourceGroupChanges{AllowedSessionTypes: &[]SessionType{SessionBatch, SessionInteractive}, IsPublic: ptr(true)}, at(2))
		}},
		{name: "modify unknown", when: func(r *ResourceGroup) ([]Event, error) { return r.Modify(ResourceGroupChanges{}, at(2)) }, err: ErrNotFound},
		{
			name:  "granting a domain",
			given: []Event{base},
			when:  func(r *ResourceGroup) ([]Event, error) { return r.Grant(Grantee{GranteeDomain, "acme"}, at(1)) },
			then:  []Event{granted},
			check: func(t *testing.T, r *ResourceGroup) {
				if !r.MayUse(SessionBatch, "acme", "ml", accessKeyA) || r.MayUse(SessionBatch, "other", "ml", accessKeyA) ||
					r.MayUse(SessionInference, "acme", "ml", accessKeyA) || !r.HasAccess(Grantee{GranteeDomain, "acme"}) {
					t.Fatal("access")
				}
			},
		},
		{name: "granting again", given: []Event{base, granted}, when: func(r *ResourceGroup) ([]Event, error) { return r.Grant(Grantee{GranteeDomain, "acme"}, at(2)) }},
		{name: "revoking", given: []Event{base, granted}, when: func(r *ResourceGroup) ([]Event, error) { return r.Revoke(Grantee{GranteeDomain, "acme"}, at(2)) },
			then: []Event{ResourceGroupAccessRevoked{Grantee: Grantee{GranteeDomain, "acme"}, At: at(2)}}},
		{name: "revoking what was not granted", given: []Event{base}, when: func(r *ResourceGroup) ([]Event, error) { return r.Revoke(Grantee{GranteeKeypair, accessKeyA}, at(2)) }},
		{name: "granting on an unknown group", when: func(r *ResourceGroup) ([]Event, error) { return r.Grant(Grantee{GranteeDomain, "acme"}, at(2)) }, err: ErrNotFound},
		{name: "a malformed project grantee", given: []Event{base}, when: func(r *ResourceGroup) ([]Event, error) { return r.Grant(Grantee{GranteeProject, "ml"}, at(2)) },
			err: ErrInvalid, fields: []string{"grantee.name"}},
		{name: "an unknown grantee kind", given: []Event{base}, when: func(r *ResourceGroup) ([]Event, error) { return r.Grant(Grantee{"user", "x"}, at(2)) },
			err: ErrInvalid, fields: []string{"grantee.kind"}},
	})
}

func TestResourceGroupMayUse(t *testing.T) {
	r := mustFold(t, RehydrateResourceGroup, []Event{
		resourceGroupCreated(),
		ResourceGroupAccessGranted{Grantee: Grantee{GranteeProject, "acme/ml"}, At: at(1)},
		ResourceGroupAccessGranted{Grantee: Grantee{GranteeKeypair, accessKeyA}, At: at(1)},
	})
	cases := []struct {
		typ                  SessionType
		domain, project, key string
		want                 bool
	}{
		{SessionBatch, "acme", "ml", "AKZZZZZZZZZZZZZZZZZZ", true},   // by project
		{SessionBatch, "acme", "cv", accessKeyA, true},               // by keypair
		{SessionBatch, "acme", "cv", "AKZZZZZZZZZZZZZZZZZZ", false},  // neither
		{SessionBatch, "other", "ml", "AKZZZZZZZZZZZZZZZZZZ", false}, // same project name, other domain
		{SessionInference, "acme", "ml", accessKeyA, false},          // type not allowed
	}
	for _, c := range cases {
		if got := r.MayUse(c.typ, c.domain, c.project, c.key); got != c.want {
			t.Errorf("MayUse(%s, %s, %s, %s) = %v", c.typ, c.domain, c.project, c.key, got)
		}
	}
	if got := r.AccessList(); len(got) != 2 || got[0].Kind != GranteeKeypair || got[1].Name != "acme/ml" {
		t.Fatalf("access list %v", got)
	}
	inactive := mustFold(t, RehydrateResourceGroup, []Event{
		resourceGroupCreated(),
		ResourceGroupAccessGranted{Grantee: Grantee{GranteeDomain, "acme"}, At: at(1)},
		ResourceGroupModified{ResourceGroupSpec: func() ResourceGroupSpec { s := resourceGroupCreated().ResourceGroupSpec; s.IsActive = false; return s }(), At: at(2)},
	})
	if inactive.MayUse(SessionBatch, "acme", "ml", accessKeyA) {
		t.Fatal("an inactive group is usable")
	}
}
