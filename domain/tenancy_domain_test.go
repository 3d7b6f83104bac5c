package domain

import (
	"testing"
	"time"
)

func TestDomainCreate(t *testing.T) {
	spec := DomainSpec{Name: "acme", Description: "ACME", TotalResourceSlots: Slots{SlotCPU: Units(64), SlotCUDADevice: Units(8)},
		AllowedVFolderHosts: VFolderHosts{"local:vol1": {PermMountInSession, PermCreateVFolder, PermMountInSession}}}
	create := func(s DomainSpec) func(*Domain) ([]Event, error) {
		return func(d *Domain) ([]Event, error) { return d.Create(s, at(0)) }
	}
	bad := spec
	bad.Name = "-acme"
	bad.TotalResourceSlots = Slots{"tpu": Units(1), SlotMem: -1, SlotCUDADevice: q("0.5")}
	bad.AllowedVFolderHosts = VFolderHosts{"local vol": {"fly"}}
	runCases(t, RehydrateDomain, []aggCase[*Domain]{
		{
			name: "a new domain is active, its host permissions in canonical order",
			when: create(spec),
			then: []Event{domainCreated()},
			check: func(t *testing.T, d *Domain) {
				if !d.Exists() || !d.IsActive() || d.Name() != "acme" || d.TotalResourceSlots()[SlotCPU] != Units(64) ||
					d.RequireActive("x") != nil || !d.CreatedAt().Equal(at(0)) {
					t.Fatalf("%+v", d)
				}
			},
		},
		{
			name:   "every problem is reported at once",
			when:   create(bad),
			err:    ErrInvalid,
			fields: []string{"name", "total_resource_slots.tpu", "total_resource_slots.mem", "total_resource_slots.cuda.device", "allowed_vfolder_hosts", "allowed_vfolder_hosts.local vol"},
		},
		{name: "a zero time is refused", when: func(d *Domain) ([]Event, error) { return d.Create(spec, time.Time{}) }, err: ErrInvalid, fields: []string{"at"}},
		{name: "the name is taken", given: []Event{domainCreated()}, when: create(spec), err: ErrConflict},
	})
}

func TestDomainModify(t *testing.T) {
	modify := func(ch DomainChanges) func(*Domain) ([]Event, error) {
		return func(d *Domain) ([]Event, error) { return d.Modify(ch, at(5)) }
	}
	base := domainCreated()
	runCases(t, RehydrateDomain, []aggCase[*Domain]{
		{
			name:  "new limits record every setting",
			given: []Event{base},
			when:  modify(DomainChanges{TotalResourceSlots: &Slots{SlotCPU: Units(32)}}),
			then: []Event{DomainModified{Description: "ACME", TotalResourceSlots: Slots{SlotCPU: Units(32)},
				AllowedVFolderHosts: base.AllowedVFolderHosts, At: at(5)}},
		},
		{
			name:  "a slot limited to zero differs from an unlimited one",
			given: []Event{DomainCreated{Name: "acme", TotalResourceSlots: Slots{}, AllowedVFolderHosts: VFolderHosts{}, At: at(0)}},
			when:  modify(DomainChanges{TotalResourceSlots: &Slots{SlotCUDADevice: 0}}),
			then:  []Event{DomainModified{TotalResourceSlots: Slots{SlotCUDADevice: 0}, AllowedVFolderHosts: VFolderHosts{}, At: at(5)}},
		},
		{
			name:  "the same settings change nothing",
			given: []Event{base},
			when: modify(DomainChanges{Description: ptr("ACME"), TotalResourceSlots: ptr(base.TotalResourceSlots.Clone()),
				AllowedVFolderHosts: &VFolderHosts{"local:vol1": {PermMountInSession, PermCreateVFolder}}, IsActive: ptr(true)}),
		},
		{
			name:  "deactivating",
			given: []Event{base},
			when:  modify(DomainChanges{IsActive: ptr(false), Description: ptr("gone")}),
			then: []Event{DomainModified{Description: "gone", TotalResourceSlots: base.TotalResourceSlots, AllowedVFolderHosts: base.AllowedVFolderHosts, At: at(5)},
				DomainDeactivated{At: at(5)}},
			check: func(t *testing.T, d *Domain) {
				if d.IsActive() || !errorIs(d.RequireActive("x"), ErrConflict) {
					t.Fatal("still active")
				}
			},
		},
		{name: "activating again", given: []Event{base, DomainDeactivated{At: at(1)}}, when: modify(DomainChanges{IsActive: ptr(true)}), then: []Event{DomainActivated{At: at(5)}}},
		{name: "an unknown domain", when: modify(DomainChanges{IsActive: ptr(true)}), err: ErrNotFound,
			check: func(t *testing.T, d *Domain) {
				if !errorIs(d.RequireActive("x"), ErrNotFound) {
					t.Fatal("RequireActive on a missing domain")
				}
			}},
		{name: "bad changes", given: []Event{base}, when: modify(DomainChanges{Description: ptr("a\x00b"), TotalResourceSlots: &Slots{SlotCPU: -1}}),
			err: ErrInvalid, fields: []string{"description", "total_resource_slots.cpu"}},
	})
}

func TestProject(t *testing.T) {
	spec := ProjectSpec{Domain: "acme", Name: "ml", TotalResourceSlots: Slots{SlotCPU: Units(16)}, ResourcePolicy: "default"}
	base := projectCreated()
	runCases(t, RehydrateProject, []aggCase[*Project]{
		{
			name: "a new project is active and has no members",
			when: func(p *Project) ([]Event, error) { return p.Create(spec, at(0)) },
			then: []Event{base},
			check: func(t *testing.T, p *Project) {
				if !p.IsActive() || p.Domain() != "acme" || p.Name() != "ml" || len(p.Members()) != 0 || p.ResourcePolicy() != "default" {
					t.Fatalf("%+v", p)
				}
			},
		},
		{name: "the name is taken in the domain", given: []Event{base}, when: func(p *Project) ([]Event, error) { return p.Create(spec, at(0)) }, err: ErrConflict},
		{
			name: "bad spec",
			when: func(p *Project) ([]Event, error) {
				return p.Create(ProjectSpec{Domain: "a/b", ResourcePolicy: "no such"}, at(0))
			},
			err:    ErrInvalid,
			fields: []string{"domain", "name", "resource_policy"},
		},
		{
			name:  "a new policy and deactivation",
			given: []Event{base},
			when: func(p *Project) ([]Event, error) {
				return p.Modify(ProjectChanges{ResourcePolicy: ptr("big"), IsActive: ptr(false)}, at(3))
			},
			then: []Event{ProjectModified{TotalResourceSlots: base.TotalResourceSlots, AllowedVFolderHosts: VFolderHosts{}, ResourcePolicy: "big", At: at(3)},
				ProjectDeactivated{At: at(3)}},
			check: func(t *testing.T, p *Project) {
				if p.IsActive() || p.ResourcePolicy() != "big" {
					t.Fatalf("%+v", p)
				}
			},
		},
		{name: "no change", given: []Event{base}, when: func(p *Project) ([]Event, error) {
			return p.Modify(ProjectChanges{ResourcePolicy: ptr("default")}, at(3))
		}},
		{name: "modify unknown", when: func(p *Project) ([]Event, error) { return p.Modify(ProjectChanges{}, at(3)) }, err: ErrNotFound},
		{
			name:  "adding a member",
			given: []Event{base},
			when:  func(p *Project) ([]Event, error) { return p.AddMember(userA, at(2)) },
			then:  []Event{ProjectMemberAdded{UserID: userA, At: at(2)}},
			check: func(t *testing.T, p *Project) {
				if !p.IsMember(userA) || p.IsMember(userB) || len(p.Members()) != 1 {
					t.Fatalf("members %v", p.Members())
				}
			},
		},
		{name: "adding a member again", given: []Event{base, ProjectMemberAdded{UserID: userA, At: at(1)}},
			when: func(p *Project) ([]Event, error) { return p.AddMember(userA, at(2)) }},
		{name: "removing a member", given: []Event{base, ProjectMemberAdded{UserID: userA, At: at(1)}, ProjectMemberAdded{UserID: userB, At: at(1)}},
			when: func(p *Project) ([]Event, error) { return p.RemoveMember(userA, at(2)) },
			then: []Event{ProjectMemberRemoved{UserID: userA, At: at(2)}},
			check: func(t *testing.T, p *Project) {
				if p.IsMember(userA) || !p.IsMember(userB) {
					t.Fatalf("members %v", p.Members())
				}
			}},
		{name: "removing a non-member", given: []Event{base}, when: func(p *Project) ([]Event, error) { return p.RemoveMember(userA, at(2)) }},
		{name: "members of an unknown project", when: func(p *Project) ([]Event, error) { return p.AddMember(userA, at(2)) }, err: ErrNotFound},
		{name: "a member without id", given: []Event{base}, when: func(p *Project) ([]Event, error) { return p.AddMember([16]byte{}, at(2)) }, err: ErrInvalid, fields: []string{"user_id"}},
	})
}

// TestTenancyRehydrateRefusesForeignStreams: every tenancy fold refuses
// an event before creation, a second creation and another aggregate's
// event.
func TestTenancyRehydrateRefusesForeignStreams(t *testing.T) {
	cases := map[string]struct {
		fold   func([]RecordedEvent) error
		events []Event
	}{
		"domain before creation":   {foldWith(RehydrateDomain), []Event{DomainActivated{At: at(0)}}},
		"domain twice":             {foldWith(RehydrateDomain), []Event{domainCreated(), domainCreated()}},
		"domain foreign":           {foldWith(RehydrateDomain), []Event{domainCreated(), ProjectActivated{At: at(1)}}},
		"project before creation":  {foldWith(RehydrateProject), []Event{ProjectMemberAdded{UserID: userA, At: at(0)}}},
		"project foreign":          {foldWith(RehydrateProject), []Event{projectCreated(), DomainActivated{At: at(1)}}},
		"user twice":               {foldWith(RehydrateUser), []Event{userCreated(), userCreated()}},
		"user after abandon":       {foldWith(RehydrateUser), []Event{UserCreationAbandoned{UserID: userA, At: at(0)}, userCreated()}},
		"abandon after creation":   {foldWith(RehydrateUser), []Event{userCreated(), UserCreationAbandoned{UserID: userA, At: at(0)}}},
		"reservation foreign":      {foldWith(RehydrateEmailReservation), []Event{userCreated()}},
		"keypair before issue":     {foldWith(RehydrateKeypair), []Event{KeypairActivated{At: at(0)}}},
		"keypair policy twice":     {foldWith(RehydrateKeypairPolicy), []Event{keypairPolicyCreated(), keypairPolicyCreated()}},
		"user policy with project": {foldWith(RehydrateUserPolicy), []Event{ProjectPolicyCreated{Name: "p", At: at(0)}}},
		"project policy before":    {foldWith(RehydrateProjectPolicy), []Event{ProjectPolicyModified{At: at(0)}}},
		"resource group foreign":   {foldWith(RehydrateResourceGroup), []Event{resourceGroupCreated(), ImageForgotten{At: at(1)}}},
		"image modified before":    {foldWith(RehydrateImage), []Event{ImageModified{At: at(0)}}},
		"image registered twice":   {foldWith(RehydrateImage), []Event{imageRegistered(), imageRegistered()}},
		"revisions not dense":      {func(evs []RecordedEvent) error { evs[0].Revision = 3; _, err := RehydrateDomain(evs); return err }, []Event{domainCreated()}},
		"image forgotten before":   {foldWith(RehydrateImage), []Event{ImageForgotten{At: at(0)}}},
		"keypair issued twice":     {foldWith(RehydrateKeypair), []Event{keypairIssued(), keypairIssued()}},
		"resource group before":    {foldWith(RehydrateResourceGroup), []Event{ResourceGroupAccessGranted{At: at(0)}}},
		"storage policy foreign":   {foldWith(RehydrateUserPolicy), []Event{domainCreated()}},
		"project policy with user": {foldWith(RehydrateProjectPolicy), []Event{UserPolicyCreated{Name: "u", At: at(0)}}},
		"keypair policy foreign":   {foldWith(RehydrateKeypairPolicy), []Event{keypairPolicyCreated(), keypairIssued()}},
		"user before creation":     {foldWith(RehydrateUser), []Event{UserMainKeypairSet{AccessKey: accessKeyA, At: at(0)}}},
		"keypair foreign":          {foldWith(RehydrateKeypair), []Event{keypairIssued(), UserPasswordChanged{At: at(1)}}},
		"project created twice":    {foldWith(RehydrateProject), []Event{projectCreated(), projectCreated()}},
		"resource group twice":     {foldWith(RehydrateResourceGroup), []Event{resourceGroupCreated(), resourceGroupCreated()}},
		"image foreign":            {foldWith(RehydrateImage), []Event{imageRegistered(), domainCreated()}},
		"user foreign":             {foldWith(RehydrateUser), []Event{userCreated(), keypairIssued()}},
		"storage policy twice":     {foldWith(RehydrateUserPolicy), []Event{UserPolicyCreated{Name: "u", At: at(0)}, UserPolicyCreated{Name: "u", At: at(0)}}},
		"keypair policy before":    {foldWith(RehydrateKeypairPolicy), []Event{KeypairPolicyModified{At: at(0)}}},
		"domain modified before":   {foldWith(RehydrateDomain), []Event{DomainModified{At: at(0)}}},
		"reservation of no payload": {func(evs []RecordedEvent) error {
			evs[0].Event = nil
			_, err := RehydrateEmailReservation(evs)
			return err
		}, []Event{UserEmailReserved{}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if err := c.fold(recorded(c.events)); KindOf(err) != KindInternal || err == nil {
				t.Fatalf("err = %v, want an internal error", err)
			}
		})
	}
}

func foldWith[A any](rehydrate func([]RecordedEvent) (A, error)) func([]RecordedEvent) error {
	return func(evs []RecordedEvent) error {
		_, err := rehydrate(evs)
		return err
	}
}

func errorIs(err, target error) bool { return err != nil && KindOf(err) == KindOf(target) }
