package commands_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

func TestTenancyLifecycle(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	wantTypes(t, e.types(t, domain.DomainStream("acme").String()), domain.TypeDomainCreated)
	wantTypes(t, e.types(t, domain.ProjectStream("acme", "ml").String()), domain.TypeProjectCreated)

	// A domain admin creates a user; the password is hashed, never stored.
	res, err := h.CreateUser.Handle(ctx, md("r-alice"), commands.CreateUser{Actor: acmeAdmin,
		Spec: domain.UserSpec{Email: "Alice@Example.com", Domain: "acme", ResourcePolicy: "default"}, Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.UserEmailStream("alice@example.com").String()), domain.TypeUserEmailReserved)
	wantTypes(t, e.types(t, domain.UserStream(res.UserID).String()), domain.TypeUserCreated)
	if res.Position != e.lastPosition(t, domain.UserStream(res.UserID).String()) {
		t.Fatalf("position %d", res.Position)
	}
	for _, ev := range e.read(t, domain.UserStream(res.UserID).String()) {
		if strings.Contains(string(ev.Data), "correct horse") {
			t.Fatal("the plaintext password was stored")
		}
	}
	alice := e.user(t, res.UserID)
	if want, _ := (testHasher{}).Hash("correct horse"); alice.PasswordHash() != want || alice.Role() != domain.RoleUser || alice.Username() != "Alice@Example.com" {
		t.Fatalf("%+v", alice)
	}

	// Membership lives in the project's stream.
	must(t)(h.AddProjectMember.Handle(ctx, e.md, commands.AddProjectMember{Actor: acmeAdmin, Domain: "acme", Project: "ml", UserID: res.UserID}))
	must(t)(h.AddProjectMember.Handle(ctx, e.md, commands.AddProjectMember{Actor: acmeAdmin, Domain: "acme", Project: "ml", UserID: res.UserID}))
	wantTypes(t, e.types(t, domain.ProjectStream("acme", "ml").String()), domain.TypeProjectCreated, domain.TypeProjectMemberAdded)
	// A user of another domain cannot join.
	bob := e.createUser(t, superadmin, "other", "bob@example.com", domain.RoleUser)
	_, err = h.AddProjectMember.Handle(ctx, e.md, commands.AddProjectMember{Actor: acmeAdmin, Domain: "acme", Project: "ml", UserID: bob})
	wantKind(t, err, domain.KindNotFound)
	_, err = h.AddProjectMember.Handle(ctx, e.md, commands.AddProjectMember{Actor: superadmin, Domain: "acme", Project: "ml", UserID: bob})
	wantKind(t, err, domain.KindConflict)
	must(t)(h.RemoveProjectMember.Handle(ctx, e.md, commands.RemoveProjectMember{Actor: acmeAdmin, Domain: "acme", Project: "ml", UserID: res.UserID}))

	// The first keypair becomes main; a second does not unless asked.
	k1, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: acmeAdmin, UserID: res.UserID, ResourcePolicy: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if !domain.IsAccessKey(k1.AccessKey) || len(k1.SecretKey) != domain.SecretKeyLength || !k1.Main || !strings.HasPrefix(k1.AccessKey, "AKIA") {
		t.Fatalf("%+v", k1)
	}
	k2, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: acmeAdmin, UserID: res.UserID, ResourcePolicy: "default", RateLimit: 100})
	if err != nil || k2.Main || k2.AccessKey == k1.AccessKey || k2.SecretKey == k1.SecretKey {
		t.Fatalf("%+v %v", k2, err)
	}
	if k := e.keypair(t, k1.AccessKey); k.SecretKey() != k1.SecretKey || k.UserID() != res.UserID || k.Domain() != "acme" || !k.IsActive() {
		t.Fatalf("%+v", k)
	}
	if e.user(t, res.UserID).MainAccessKey() != k1.AccessKey {
		t.Fatal("first keypair is not main")
	}
	// The main keypair cannot be deactivated until another is main.
	_, err = h.SetKeypairActive.Handle(ctx, e.md, commands.SetKeypairActive{Actor: acmeAdmin, AccessKey: k1.AccessKey, Active: false})
	wantKind(t, err, domain.KindConflict)
	must(t)(h.SetMainKeypair.Handle(ctx, e.md, commands.SetMainKeypair{Actor: acmeAdmin, UserID: res.UserID, AccessKey: k2.AccessKey}))
	must(t)(h.SetKeypairActive.Handle(ctx, e.md, commands.SetKeypairActive{Actor: acmeAdmin, AccessKey: k1.AccessKey, Active: false}))
	_, err = h.SetMainKeypair.Handle(ctx, e.md, commands.SetMainKeypair{Actor: acmeAdmin, UserID: res.UserID, AccessKey: k1.AccessKey})
	wantKind(t, err, domain.KindConflict) // inactive
	_, err = h.SetMainKeypair.Handle(ctx, e.md, commands.SetMainKeypair{Actor: superadmin, UserID: bob, AccessKey: k2.AccessKey})
	wantKind(t, err, domain.KindInvalid) // not bob's

	// The owner rotates its own secret; the old one is gone.
	alicePrincipal := commands.Principal{UserID: res.UserID, Role: domain.RoleUser, Domain: "acme"}
	rot, err := h.RotateKeypairSecret.Handle(ctx, e.md, commands.RotateKeypairSecret{Actor: alicePrincipal, AccessKey: k2.AccessKey})
	if err != nil || rot.SecretKey == k2.SecretKey || e.keypair(t, k2.AccessKey).SecretKey() != rot.SecretKey {
		t.Fatalf("%+v %v", rot, err)
	}
	// Another user of the domain may not.
	_, err = h.RotateKeypairSecret.Handle(ctx, e.md, commands.RotateKeypairSecret{Actor: acmeUser, AccessKey: k2.AccessKey})
	wantKind(t, err, domain.KindForbidden)

	// Policies are checked where they are named.
	_, err = h.ModifyKeypair.Handle(ctx, e.md, commands.ModifyKeypair{Actor: acmeAdmin, AccessKey: k2.AccessKey, ResourcePolicy: ptr("huge")})
	wantKind(t, err, domain.KindInvalid)
	_, err = h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: acmeAdmin, UserID: res.UserID})
	wantKind(t, err, domain.KindInvalid)

	// Role, status and password.
	must(t)(h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: acmeAdmin, UserID: res.UserID,
		Changes: domain.UserChanges{Role: ptr(domain.RoleAdmin)}, Password: ptr("battery staple")}))
	wantTypes(t, e.types(t, domain.UserStream(res.UserID).String()), domain.TypeUserCreated, domain.TypeUserMainKeypairSet,
		domain.TypeUserMainKeypairSet, domain.TypeUserModified, domain.TypeUserPasswordChanged)
	_, err = h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: acmeAdmin, UserID: res.UserID, Password: ptr("short")})
	wantKind(t, err, domain.KindInvalid)

	// A deactivated domain takes no new projects.
	must(t)(h.ModifyDomain.Handle(ctx, e.md, commands.ModifyDomain{Actor: superadmin, Name: "acme", Changes: domain.DomainChanges{IsActive: ptr(false)}}))
	_, err = h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "cv"}})
	wantKind(t, err, domain.KindConflict)
	_, err = h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "nowhere", Name: "cv"}})
	wantKind(t, err, domain.KindNotFound)
}

func TestResourceGroupsAndImages(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	must(t)(h.CreateResourceGroup.Handle(ctx, e.md, commands.CreateResourceGroup{Actor: superadmin, Name: "gpu", Spec: domain.ResourceGroupSpec{IsPublic: true}}))
	_, err := h.CreateResourceGroup.Handle(ctx, e.md, commands.CreateResourceGroup{Actor: superadmin, Name: "gpu"})
	wantKind(t, err, domain.KindConflict)
	must(t)(h.GrantResourceGroupAccess.Handle(ctx, e.md, commands.GrantResourceGroupAccess{Actor: superadmin, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeProject, Name: "acme/ml"}}))
	must(t)(h.GrantResourceGroupAccess.Handle(ctx, e.md, commands.GrantResourceGroupAccess{Actor: superadmin, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "other"}}))
	for _, g := range []domain.Grantee{{Kind: domain.GranteeProject, Name: "acme/cv"}, {Kind: domain.GranteeDomain, Name: "nowhere"}, {Kind: domain.GranteeKeypair, Name: "AKIAAAAAAAAAAAAAAAAA"}} {
		_, err = h.GrantResourceGroupAccess.Handle(ctx, e.md, commands.GrantResourceGroupAccess{Actor: superadmin, ResourceGroup: "gpu", Grantee: g})
		wantKind(t, err, domain.KindNotFound)
	}
	_, err = h.GrantResourceGroupAccess.Handle(ctx, e.md, commands.GrantResourceGroupAccess{Actor: superadmin, ResourceGroup: "cpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "other"}})
	wantKind(t, err, domain.KindNotFound)
	must(t)(h.RevokeResourceGroupAccess.Handle(ctx, e.md, commands.RevokeResourceGroupAccess{Actor: superadmin, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "other"}}))
	must(t)(h.ModifyResourceGroup.Handle(ctx, e.md, commands.ModifyResourceGroup{Actor: superadmin, Name: "gpu", Changes: domain.ResourceGroupChanges{SchedulerOrder: ptr(domain.OrderDRF)}}))
	wantTypes(t, e.types(t, domain.ResourceGroupStream("gpu").String()), domain.TypeResourceGroupCreated, domain.TypeResourceGroupAccessGranted,
		domain.TypeResourceGroupAccessGranted, domain.TypeResourceGroupAccessRevoked, domain.TypeResourceGroupModified)

	img := commands.RegisterImage{Actor: superadmin, Reference: "cr.example.com/pytorch:2.4", Architecture: "amd64",
		Spec: domain.ImageSpec{MinResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(1)}}}
	must(t)(h.RegisterImage.Handle(ctx, e.md, img))
	_, err = h.RegisterImage.Handle(ctx, e.md, img)
	wantKind(t, err, domain.KindConflict)
	stream := domain.ImageStream(img.Reference, "x86_64").String()
	must(t)(h.ModifyImage.Handle(ctx, e.md, commands.ModifyImage{Actor: superadmin, Reference: img.Reference, Architecture: "x86_64",
		Changes: domain.ImageChanges{ServicePorts: &[]domain.ServicePort{{Name: "jupyter", Protocol: "http", Port: 8080}}}}))
	_, err = h.ForgetImage.Handle(ctx, e.md, commands.ForgetImage{Actor: superadmin, Reference: img.Reference, Architecture: "arm64"})
	wantKind(t, err, domain.KindNotFound) // registered for x86_64 only
	must(t)(h.ForgetImage.Handle(ctx, e.md, commands.ForgetImage{Actor: superadmin, Reference: img.Reference, Architecture: "x86_64"}))
	must(t)(h.RegisterImage.Handle(ctx, e.md, img))
	wantTypes(t, e.types(t, stream), domain.TypeImageRegistered, domain.TypeImageModified, domain.TypeImageForgotten, domain.TypeImageRegistered)
	_, err = h.RegisterImage.Handle(ctx, e.md, commands.RegisterImage{Actor: superadmin, Reference: "pytorch:latest", Architecture: "x86_64"})
	wantKind(t, err, domain.KindInvalid)
}

func TestCreateUserInvalidWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	before := e.lastPosition(t, domain.ProjectStream("other", "ml").String())
	_, err := e.handlers.CreateUser.Handle(ctx, md("bad"), commands.CreateUser{Actor: superadmin,
		Spec: domain.UserSpec{Email: "nope", Domain: "acme", Role: "root"}, Password: "x"})
	wantKind(t, err, domain.KindInvalid)
	for _, f := range []string{"email", "role", "password"} {
		if !strings.Contains(err.Error(), f+":") {
			t.Errorf("%v does not name %s", err, f)
		}
	}
	_, err = e.handlers.CreateUser.Handle(ctx, md("bad"), commands.CreateUser{Actor: superadmin,
		Spec: domain.UserSpec{Email: "a@example.com", Domain: "acme", ResourcePolicy: "missing"}, Password: "long enough"})
	wantKind(t, err, domain.KindInvalid)
	all, rerr := e.store.ReadAll(ctx, before, 10)
	if rerr != nil || len(all) != 0 {
		t.Fatalf("something was written: %v %v", all, rerr)
	}
}

func TestCreateUserWithoutHasher(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sa := commands.Principal{Role: domain.RoleSuperadmin}
	must(t)(e.handlers.CreateDomain.Handle(ctx, e.md, commands.CreateDomain{Actor: sa, Spec: domain.DomainSpec{Name: "acme"}}))
	_, err := e.handlers.CreateUser.Handle(ctx, e.md, commands.CreateUser{Actor: sa, Spec: domain.UserSpec{Email: "a@example.com", Domain: "acme"}, Password: "long enough"})
	wantKind(t, err, domain.KindInternal)
	if len(e.read(t, domain.UserEmailStream("a@example.com").String())) != 0 {
		t.Fatal("reserved an address without creating the user")
	}
}

// TestUniqueNamesUnderConcurrency: many creators of the same name, one
// winner; the others get KindConflict.
func TestUniqueNamesUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	const n = 8
	run := func(name string, f func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = f(i)
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case domain.KindOf(err) != domain.KindConflict:
				t.Errorf("%s: %v, want a conflict", name, err)
			}
		}
		if ok != 1 {
			t.Errorf("%s: %d creations succeeded, want 1", name, ok)
		}
	}
	run("domain", func(int) error {
		_, err := e.handlers.CreateDomain.Handle(ctx, e.md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: "race"}})
		return err
	})
	run("user e-mail, any case", func(i int) error {
		email := []string{"Race@Example.com", "race@example.com", "RACE@EXAMPLE.COM"}[i%3]
		_, err := e.handlers.CreateUser.Handle(ctx, md("race-"+string(rune('a'+i))), commands.CreateUser{Actor: superadmin,
			Spec: domain.UserSpec{Email: email, Domain: "acme"}, Password: "long enough"})
		return err
	})
	run("resource group", func(int) error {
		_, err := e.handlers.CreateResourceGroup.Handle(ctx, e.md, commands.CreateResourceGroup{Actor: superadmin, Name: "race"})
		return err
	})
	if n := len(e.read(t, domain.UserEmailStream("race@example.com").String())); n != 1 {
		t.Fatalf("%d reservations", n)
	}
}

func TestCreateUserIsIdempotentByRequest(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	cmd := commands.CreateUser{Actor: acmeAdmin, Spec: domain.UserSpec{Email: "carol@example.com", Domain: "acme"}, Password: "long enough"}
	first, err := e.handlers.CreateUser.Handle(ctx, md("r-carol"), cmd)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.handlers.CreateUser.Handle(ctx, md("r-carol"), cmd)
	if err != nil || again.UserID != first.UserID || again.Position != first.Position {
		t.Fatalf("repeat: %+v %v, first %+v", again, err, first)
	}
	// The same request id for another domain's user is no shortcut.
	other := cmd
	other.Actor, other.Spec.Domain = superadmin, "other"
	_, err = e.handlers.CreateUser.Handle(ctx, md("r-carol"), other)
	wantKind(t, err, domain.KindConflict)
	// Another request for the address is a conflict.
	_, err = e.handlers.CreateUser.Handle(ctx, md("r-carol-2"), cmd)
	wantKind(t, err, domain.KindConflict)
}

// TestCreateUserCrashWindow: a reservation left without its user (a crash
// between the two appends) is completed by the same request, refused to
// others while young, and taken over once old, after which the first
// creation can never complete.
func TestCreateUserCrashWindow(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	// reserve appends what step 1 of a creation that crashed left.
	reserve := func(email string, orphan uuid.UUID, requestID string) {
		t.Helper()
		data, err := eventstore.NewEvent(domain.TypeUserEmailReserved, domain.UserEmailReserved{Email: email, UserID: orphan, RequestID: requestID, At: e.clock.Now()}, md(requestID).Stored())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Append(ctx, domain.UserEmailStream(email).String(), eventstore.NoStream, data); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(email string) commands.CreateUser {
		return commands.CreateUser{Actor: superadmin, Spec: domain.UserSpec{Email: email, Domain: "acme"}, Password: "long enough"}
	}

	t.Run("the same request completes it", func(t *testing.T) {
		orphan := uuid.MustParse("0195a0c0-0000-7000-8000-0000000000f1")
		reserve("dave@example.com", orphan, "r-dave")
		res, err := e.handlers.CreateUser.Handle(ctx, md("r-dave"), cmd("dave@example.com"))
		if err != nil || res.UserID != orphan || e.user(t, orphan).Email() != "dave@example.com" {
			t.Fatalf("%+v %v", res, err)
		}
	})

	t.Run("another request waits for the grace, then takes over", func(t *testing.T) {
		orphan := uuid.MustParse("0195a0c0-0000-7000-8000-0000000000f3")
		reserve("erin@example.com", orphan, "r-erin")
		_, err := e.handlers.CreateUser.Handle(ctx, md("r-erin-2"), cmd("erin@example.com"))
		wantKind(t, err, domain.KindConflict)

		e.clock.Advance(commands.DefaultEmailReservationGrace)
		res, err := e.handlers.CreateUser.Handle(ctx, md("r-erin-2"), cmd("erin@example.com"))
		if err != nil || res.UserID == orphan {
			t.Fatalf("%+v %v", res, err)
		}
		wantTypes(t, e.types(t, domain.UserEmailStream("erin@example.com").String()), domain.TypeUserEmailReserved, domain.TypeUserEmailReserved)
		// The first request, retried late, cannot create its user any more.
		_, err = e.handlers.CreateUser.Handle(ctx, md("r-erin"), cmd("erin@example.com"))
		wantKind(t, err, domain.KindConflict)
	})

	t.Run("a late step 2 of the first request fails on the closed stream", func(t *testing.T) {
		ghost := uuid.MustParse("0195a0c0-0000-7000-8000-0000000000f2")
		reserve("fay@example.com", ghost, "r-fay")
		e.clock.Advance(commands.DefaultEmailReservationGrace)
		if _, err := e.handlers.CreateUser.Handle(ctx, md("r-fay-2"), cmd("fay@example.com")); err != nil {
			t.Fatal(err)
		}
		wantTypes(t, e.types(t, domain.UserStream(ghost).String()), domain.TypeUserCreationAbandoned)
		u := e.user(t, ghost)
		if _, err := u.Create(domain.UserSpec{ID: ghost, Email: "fay@example.com", Domain: "acme", PasswordHash: "h"}, e.clock.Now()); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("creating the abandoned user: %v", err)
		}
	})
}

func TestKeypairKeysAreFresh(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	u := e.createUser(t, superadmin, "acme", "gina@example.com", domain.RoleUser)
	seen := map[string]bool{}
	for range 20 {
		k, err := e.handlers.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: superadmin, UserID: u, ResourcePolicy: "default"})
		if err != nil {
			t.Fatal(err)
		}
		if seen[k.AccessKey] || seen[k.SecretKey] {
			t.Fatal("a key repeated")
		}
		seen[k.AccessKey], seen[k.SecretKey] = true, true
	}
}

func ptr[T any](v T) *T { return &v }
