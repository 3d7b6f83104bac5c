package domain

import "testing"

func TestKeypairPolicy(t *testing.T) {
	base := keypairPolicyCreated()
	runCases(t, RehydrateKeypairPolicy, []aggCase[*KeypairPolicy]{
		{
			name: "defaults: limited, one container per session",
			when: func(k *KeypairPolicy) ([]Event, error) { return k.Create("small", KeypairPolicySpec{}, at(0)) },
			then: []Event{KeypairPolicyCreated{Name: "small", KeypairPolicySpec: KeypairPolicySpec{
				TotalResourceSlots: Slots{}, DefaultForUnspecified: UnspecifiedLimited, MaxContainersPerSession: 1,
				MaxPendingSessionResourceSlots: Slots{}, AllowedVFolderHosts: VFolderHosts{},
			}, At: at(0)}},
			check: func(t *testing.T, k *KeypairPolicy) {
				if k.Name() != "small" || k.Spec().MaxContainersPerSession != 1 {
					t.Fatalf("%+v", k)
				}
			},
		},
		{
			name: "every problem at once",
			when: func(k *KeypairPolicy) ([]Event, error) {
				return k.Create("", KeypairPolicySpec{
					TotalResourceSlots: Slots{SlotCPU: -1}, DefaultForUnspecified: "maybe", MaxConcurrentSessions: -1,
					MaxContainersPerSession: MaxClusterSize + 1, MaxPendingSessionCount: -2,
					MaxPendingSessionResourceSlots: Slots{"x": 1}, IdleTimeout: -1, MaxSessionLifetime: maxTimeoutSeconds + 1,
					AllowedVFolderHosts: VFolderHosts{"": nil},
				}, at(0))
			},
			err: ErrInvalid,
			fields: []string{"name", "total_resource_slots.cpu", "default_for_unspecified", "max_concurrent_sessions",
				"max_containers_per_session", "max_pending_session_count", "max_pending_session_resource_slots.x",
				"idle_timeout", "max_session_lifetime", "allowed_vfolder_hosts"},
		},
		{name: "the name is taken", given: []Event{base}, when: func(k *KeypairPolicy) ([]Event, error) { return k.Create("default", KeypairPolicySpec{}, at(0)) }, err: ErrConflict},
		{
			name:  "a change records every limit",
			given: []Event{base},
			when: func(k *KeypairPolicy) ([]Event, error) {
				return k.Modify(KeypairPolicyChanges{MaxConcurrentSessions: ptr(8), IdleTimeout: ptr(int64(0))}, at(2))
			},
			then: []Event{func() KeypairPolicyModified {
				s := base.KeypairPolicySpec.clone()
				s.MaxConcurrentSessions, s.IdleTimeout = 8, 0
				return KeypairPolicyModified{KeypairPolicySpec: s, At: at(2)}
			}()},
		},
		{name: "no change", given: []Event{base}, when: func(k *KeypairPolicy) ([]Event, error) {
			return k.Modify(KeypairPolicyChanges{MaxConcurrentSessions: ptr(4), TotalResourceSlots: &Slots{SlotCPU: Units(8)}}, at(2))
		}},
		{name: "zero containers on modify", given: []Event{base}, when: func(k *KeypairPolicy) ([]Event, error) {
			return k.Modify(KeypairPolicyChanges{MaxContainersPerSession: ptr(0)}, at(2))
		}, err: ErrInvalid, fields: []string{"max_containers_per_session"}},
		{name: "modify unknown", when: func(k *KeypairPolicy) ([]Event, error) { return k.Modify(KeypairPolicyChanges{}, at(2)) }, err: ErrNotFound},
	})
}

func TestKeypairPolicySlotLimit(t *testing.T) {
	cases := []struct {
		def     DefaultForUnspecified
		slot    SlotName
		want    Quantity
		limited bool
	}{
		{UnspecifiedLimited, SlotCPU, Units(8), true},
		{UnspecifiedLimited, SlotCUDADevice, 0, true},
		{UnspecifiedUnlimited, SlotCPU, Units(8), true},
		{UnspecifiedUnlimited, SlotCUDADevice, 0, false},
		{UnspecifiedUnlimited, SlotMem, 0, true}, // named with zero: limited to zero
	}
	for _, c := range cases {
		s := KeypairPolicySpec{TotalResourceSlots: Slots{SlotCPU: Units(8), SlotMem: 0}, DefaultForUnspecified: c.def}
		if got, limited := s.SlotLimit(c.slot); got != c.want || limited != c.limited {
			t.Errorf("%s %s: %s %v, want %s %v", c.def, c.slot, got, limited, c.want, c.limited)
		}
	}
}

func TestStoragePolicies(t *testing.T) {
	spec := StoragePolicySpec{MaxVFolderCount: 10, MaxQuotaScopeSize: 1 << 40}
	runCases(t, RehydrateUserPolicy, []aggCase[*StoragePolicy]{
		{name: "user policy", when: func(s *StoragePolicy) ([]Event, error) { return s.Create("default", spec, at(0)) },
			then: []Event{UserPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}},
			check: func(t *testing.T, s *StoragePolicy) {
				if s.Scope() != ScopeUser || s.Name() != "default" || s.Spec() != spec {
					t.Fatalf("%+v", s)
				}
			}},
		{name: "user policy taken", given: []Event{UserPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}},
			when: func(s *StoragePolicy) ([]Event, error) { return s.Create("default", spec, at(0)) }, err: ErrConflict},
		{name: "user policy modified", given: []Event{UserPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}},
			when: func(s *StoragePolicy) ([]Event, error) {
				return s.Modify(StoragePolicyChanges{MaxVFolderCount: ptr(0)}, at(1))
			},
			then: []Event{UserPolicyModified{StoragePolicySpec: StoragePolicySpec{MaxQuotaScopeSize: 1 << 40}, At: at(1)}}},
		{name: "user policy unchanged", given: []Event{UserPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}},
			when: func(s *StoragePolicy) ([]Event, error) {
				return s.Modify(StoragePolicyChanges{MaxVFolderCount: ptr(10)}, at(1))
			}},
		{name: "bad limits", when: func(s *StoragePolicy) ([]Event, error) {
			return s.Create("x", StoragePolicySpec{MaxVFolderCount: -1, MaxQuotaScopeSize: -5}, at(0))
		}, err: ErrInvalid, fields: []string{"max_vfolder_count", "max_quota_scope_size"}},
		{name: "modify unknown", when: func(s *StoragePolicy) ([]Event, error) { return s.Modify(StoragePolicyChanges{}, at(1)) }, err: ErrNotFound},
	})
	runCases(t, RehydrateProjectPolicy, []aggCase[*StoragePolicy]{
		{name: "project policy", when: func(s *StoragePolicy) ([]Event, error) { return s.Create("default", spec, at(0)) },
			then: []Event{ProjectPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}}},
		{name: "project policy modified", given: []Event{ProjectPolicyCreated{Name: "default", StoragePolicySpec: spec, At: at(0)}},
			when: func(s *StoragePolicy) ([]Event, error) {
				return s.Modify(StoragePolicyChanges{MaxQuotaScopeSize: ptr(int64(5))}, at(1))
			},
			then: []Event{ProjectPolicyModified{StoragePolicySpec: StoragePolicySpec{MaxVFolderCount: 10, MaxQuotaScopeSize: 5}, At: at(1)}},
			check: func(t *testing.T, s *StoragePolicy) {
				if s.Scope() != ScopeProject || s.Spec().MaxQuotaScopeSize != 5 {
					t.Fatalf("%+v", s)
				}
			}},
	})
}
