package tenancy_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

var ctx = context.Background()

// plainHasher stands in for argon2id in these tests.
type plainHasher struct{}

func (plainHasher) Hash(p string) (string, error) {
	return "hashed:" + strings.ReplaceAll(strings.ToUpper(p), " ", "_"), nil
}

var superadmin = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}

// world is what the commands of a test wrote and what the read model
// should show.
type world struct {
	alice, bob       uuid.UUID
	aliceKey, bobKey commands.IssueKeypairResult
	rotated          string
	tokens           []uuid.UUID // alice's: the second is revoked
	last             uint64
}

// Digests of the test tokens (SHA-256 of "1" and "2").
const (
	digest1 = "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
	digest2 = "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
)

// build sends the commands of a small but complete tenancy; with
// restart set it restarts the projector half-way.
func build(t testing.TB, h *commands.Handlers, restart func()) world {
	t.Helper()
	var w world
	md := projectiontest.MD
	step := func(r commands.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		w.last = max(w.last, r.Position)
	}
	step(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: superadmin, Name: "default",
		Spec: domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(8), domain.SlotCUDAShares: projectiontest.Qty("1.5")},
			MaxConcurrentSessions: 3, IdleTimeout: 600, AllowedVFolderHosts: domain.VFolderHosts{"local": {domain.PermMountInSession}}}}))
	step(h.ModifyKeypairPolicy.Handle(ctx, md, commands.ModifyKeypairPolicy{Actor: superadmin, Name: "default",
		Changes: domain.KeypairPolicyChanges{MaxConcurrentSessions: ptr(5)}}))
	step(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: superadmin, Name: "big", Spec: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited}}))
	step(h.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: superadmin, Name: "default", Spec: domain.StoragePolicySpec{MaxVFolderCount: 10}}))
	step(h.ModifyUserPolicy.Handle(ctx, md, commands.ModifyUserPolicy{Actor: superadmin, Name: "default", Changes: domain.StoragePolicyChanges{MaxQuotaScopeSize: ptr(int64(1 << 40))}}))
	step(h.CreateProjectPolicy.Handle(ctx, md, commands.CreateProjectPolicy{Actor: superadmin, Name: "default", Spec: domain.StoragePolicySpec{MaxVFolderCount: 50}}))
	for _, d := range []string{"acme", "other"} {
		step(h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: d,
			TotalResourceSlots: domain.Slots{domain.SlotCUDADevice: domain.Units(16)}}}))
	}
	step(h.ModifyDomain.Handle(ctx, md, commands.ModifyDomain{Actor: superadmin, Name: "other", Changes: domain.DomainChanges{IsActive: ptr(false), Description: ptr("closed")}}))
	step(h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "ml", ResourcePolicy: "default"}}))
	step(h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "cv"}}))
	step(h.ModifyProject.Handle(ctx, md, commands.ModifyProject{Actor: superadmin, Domain: "acme", Name: "cv",
		Changes: domain.ProjectChanges{TotalResourceSlots: &domain.Slots{domain.SlotCPU: domain.Units(4)}, IsActive: ptr(false)}}))

	user := func(email string, role domain.Role) uuid.UUID {
		res, err := h.CreateUser.Handle(ctx, commands.Metadata{RequestID: "create-" + email}, commands.CreateUser{Actor: superadmin,
			Spec: domain.UserSpec{Email: email, Domain: "acme", Role: role, ResourcePolicy: "default"}, Password: "password-" + email})
		if err != nil {
			t.Fatal(err)
		}
		w.last = max(w.last, res.Position)
		return res.UserID
	}
	w.alice = user("Alice@Example.com", domain.RoleUser)
	w.bob = user("bob@example.com", domain.RoleAdmin)
	if restart != nil {
		restart()
	}
	for _, u := range []uuid.UUID{w.alice, w.bob} {
		step(h.AddProjectMember.Handle(ctx, md, commands.AddProjectMember{Actor: superadmin, Domain: "acme", Project: "ml", UserID: u}))
	}
	step(h.AddProjectMember.Handle(ctx, md, commands.AddProjectMember{Actor: superadmin, Domain: "acme", Project: "cv", UserID: w.alice}))
	step(h.RemoveProjectMember.Handle(ctx, md, commands.RemoveProjectMember{Actor: superadmin, Domain: "acme", Project: "ml", UserID: w.bob}))
	step(h.ModifyUser.Handle(ctx, md, commands.ModifyUser{Actor: superadmin, UserID: w.bob,
		Changes: domain.UserChanges{Status: ptr(domain.UserInactive), FullName: ptr("Bob")}, Password: ptr("new password")}))

	var err error
	if w.aliceKey, err = h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: superadmin, UserID: w.alice, ResourcePolicy: "default", RateLimit: 500}); err != nil {
		t.Fatal(err)
	}
	second, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: superadmin, UserID: w.alice, ResourcePolicy: "big"})
	if err != nil {
		t.Fatal(err)
	}
	step(h.SetKeypairActive.Handle(ctx, md, commands.SetKeypairActive{Actor: superadmin, AccessKey: second.AccessKey, Active: false}))
	if w.bobKey, err = h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: superadmin, UserID: w.bob, ResourcePolicy: "default"}); err != nil {
		t.Fatal(err)
	}
	rot, err := h.RotateKeypairSecret.Handle(ctx, md, commands.RotateKeypairSecret{Actor: superadmin, AccessKey: w.aliceKey.AccessKey})
	if err != nil {
		t.Fatal(err)
	}
	w.rotated = rot.SecretKey
	step(h.ModifyKeypair.Handle(ctx, md, commands.ModifyKeypair{Actor: superadmin, AccessKey: w.aliceKey.AccessKey, RateLimit: ptr(900)}))

	step(h.CreateResourceGroup.Handle(ctx, md, commands.CreateResourceGroup{Actor: superadmin, Name: "gpu", Spec: domain.ResourceGroupSpec{IsPublic: true}}))
	step(h.CreateResourceGroup.Handle(ctx, md, commands.CreateResourceGroup{Actor: superadmin, Name: "cpu"}))
	step(h.CreateResourceGroup.Handle(ctx, md, commands.CreateResourceGroup{Actor: superadmin, Name: "old"}))
	grant := func(rg string, kind domain.GranteeKind, name string) {
		step(h.GrantResourceGroupAccess.Handle(ctx, md, commands.GrantResourceGroupAccess{Actor: superadmin, ResourceGroup: rg, Grantee: domain.Grantee{Kind: kind, Name: name}}))
	}
	grant("gpu", domain.GranteeProject, "acme/ml")
	grant("cpu", domain.GranteeDomain, "acme")
	grant("cpu", domain.GranteeKeypair, w.bobKey.AccessKey)
	grant("old", domain.GranteeDomain, "acme")
	grant("gpu", domain.GranteeDomain, "other")
	step(h.RevokeResourceGroupAccess.Handle(ctx, md, commands.RevokeResourceGroupAccess{Actor: superadmin, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "other"}}))
	step(h.ModifyResourceGroup.Handle(ctx, md, commands.ModifyResourceGroup{Actor: superadmin, Name: "old", Changes: domain.ResourceGroupChanges{IsActive: ptr(false)}}))
	step(h.ModifyResourceGroup.Handle(ctx, md, commands.ModifyResourceGroup{Actor: superadmin, Name: "gpu", Changes: domain.ResourceGroupChanges{SchedulerOrder: ptr(domain.OrderDRF)}}))

	for _, ref := range []string{"cr.io/pytorch:2.4", "cr.io/tf:2.15"} {
		step(h.RegisterImage.Handle(ctx, md, commands.RegisterImage{Actor: superadmin, Reference: ref, Architecture: "x86_64",
			Spec: domain.ImageSpec{MinResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(1)}}}))
	}
	step(h.ModifyImage.Handle(ctx, md, commands.ModifyImage{Actor: superadmin, Reference: "cr.io/pytorch:2.4", Architecture: "x86_64",
		Changes: domain.ImageChanges{ServicePorts: &[]domain.ServicePort{{Name: "jupyter", Protocol: "http", Port: 8080}}}}))
	step(h.ForgetImage.Handle(ctx, md, commands.ForgetImage{Actor: superadmin, Reference: "cr.io/tf:2.15", Architecture: "x86_64"}))

	alice := commands.Principal{UserID: w.alice, Role: domain.RoleUser, Domain: "acme"}
	for i, dg := range []string{digest1, digest2} {
		res, err := h.IssueToken.Handle(ctx, md, commands.IssueToken{Actor: alice, UserID: w.alice, Kind: domain.TokenBearer,
			Digest: dg, Description: "token " + dg[:4], ExpiresAt: time.Date(2030, 1, 1, 0, 0, i, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		w.tokens, w.last = append(w.tokens, res.TokenID), max(w.last, res.Position)
	}
	step(h.RevokeToken.Handle(ctx, md, commands.RevokeToken{Actor: alice, TokenID: w.tokens[1]}))
	return w
}

func handlers(t testing.TB, b *projectiontest.Backend) *commands.Handlers {
	t.Helper()
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{PasswordHasher: plainHasher{}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestTenancyReadModel(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := tenancy.New(b.DB)
		if err := projections.Setup(ctx, b.DB, rm); err != nil {
			t.Fatal(err)
		}
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 7})
		restart := func() {
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			r = projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 3})
		}
		w := build(t, handlers(t, b), restart)
		r.WaitFor(t, w.last)

		checkDomainsAndProjects(t, rm, w)
		checkUsers(t, rm, w)
		checkKeypairs(t, rm, w)
		checkPoliciesGroupsImages(t, rm, w)
		checkTokens(t, rm, w)

		// A rebuild from position 0 produces the same rows.
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		live := dump(t, b.DB)
		p, err := projections.NewProjector(b.DB, b.Store, tenancy.New(b.DB), projections.Options{BatchSize: 500, Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(live, dump(t, b.DB)); diff != "" {
			t.Fatalf("rebuild differs from the live rows:\n%s", diff)
		}
	})
}

func checkDomainsAndProjects(t *testing.T, rm *tenancy.ReadModel, w world) {
	t.Helper()
	ds, err := rm.ListDomains(ctx)
	if err != nil || len(ds) != 2 || ds[0].Name != "acme" || !ds[0].IsActive || ds[1].IsActive || ds[1].Description != "closed" ||
		ds[0].TotalResourceSlots[domain.SlotCUDADevice] != domain.Units(16) || ds[0].AllowedVFolderHosts == nil {
		t.Fatalf("domains %+v %v", ds, err)
	}
	if _, err := rm.GetDomain(ctx, "nowhere"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetDomain(nowhere) = %v", err)
	}
	cv, err := rm.GetProject(ctx, "acme", "cv")
	if err != nil || cv.IsActive || cv.TotalResourceSlots[domain.SlotCPU] != domain.Units(4) || cv.ResourcePolicy != "" {
		t.Fatalf("cv %+v %v", cv, err)
	}
	ps, err := rm.ListProjects(ctx, "acme")
	if err != nil || len(ps) != 2 || ps[0].Name != "cv" || ps[1].ResourcePolicy != "default" {
		t.Fatalf("projects %+v %v", ps, err)
	}
	if all, err := rm.ListProjects(ctx, ""); err != nil || len(all) != 2 {
		t.Fatalf("all projects %+v %v", all, err)
	}
	members, err := rm.ProjectMembers(ctx, "acme", "ml")
	if err != nil || len(members) != 1 || members[0].UserID != w.alice {
		t.Fatalf("members of ml %+v %v", members, err)
	}
	of, err := rm.ProjectsOf(ctx, w.alice)
	if err != nil || len(of) != 2 || of[0].Project != "cv" || of[1].Project != "ml" {
		t.Fatalf("projects of alice %+v %v", of, err)
	}
}

func checkUsers(t *testing.T, rm *tenancy.ReadModel, w world) {
	t.Helper()
	alice, err := rm.GetUser(ctx, w.alice)
	if err != nil || alice.Email != "Alice@Example.com" || alice.Role != domain.RoleUser || alice.Status != domain.UserActive ||
		alice.MainAccessKey != w.aliceKey.AccessKey || alice.Domain != "acme" || alice.ResourcePolicy != "default" {
		t.Fatalf("alice %+v %v", alice, err)
	}
	raw, _ := json.Marshal(alice)
	if strings.Contains(string(raw), "hashed:") || strings.Contains(string(raw), "password") {
		t.Fatalf("a listing shows the password hash: %s", raw)
	}
	login, err := rm.Login(ctx, "ALICE@example.COM")
	if err != nil || login.ID != w.alice || login.PasswordHash != "hashed:PASSWORD-ALICE@EXAMPLE.COM" {
		t.Fatalf("login %+v %v", login, err)
	}
	raw, _ = json.Marshal(login)
	if strings.Contains(string(raw), "hashed:") {
		t.Fatalf("the login record marshals its hash: %s", raw)
	}
	bob, err := rm.UserByEmail(ctx, "bob@example.com")
	if err != nil || bob.Status != domain.UserInactive || bob.FullName != "Bob" || bob.Role != domain.RoleAdmin {
		t.Fatalf("bob %+v %v", bob, err)
	}
	if l, err := rm.Login(ctx, "bob@example.com"); err != nil || l.PasswordHash != "hashed:NEW_PASSWORD" {
		t.Fatalf("bob's new password %+v %v", l, err)
	}
	for _, c := range []struct {
		f    tenancy.UserFilter
		want []uuid.UUID
	}{
		{tenancy.UserFilter{}, []uuid.UUID{w.alice, w.bob}},
		{tenancy.UserFilter{Domain: "acme", Role: domain.RoleAdmin}, []uuid.UUID{w.bob}},
		{tenancy.UserFilter{Status: domain.UserActive}, []uuid.UUID{w.alice}},
		{tenancy.UserFilter{Domain: "other"}, nil},
	} {
		got, err := rm.ListUsers(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []uuid.UUID
		for _, u := range got {
			ids = append(ids, u.ID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("ListUsers(%+v) = %v, want %v", c.f, ids, c.want)
		}
	}
	if _, err := rm.ListUsers(ctx, tenancy.UserFilter{Role: "root"}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("bad role filter: %v", err)
	}
	if _, err := rm.Login(ctx, "nobody@example.com"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Login(nobody) = %v", err)
	}
}

func checkKeypairs(t *testing.T, rm *tenancy.ReadModel, w world) {
	t.Helper()
	k, err := rm.GetKeypair(ctx, w.aliceKey.AccessKey)
	if err != nil || !k.IsMain || !k.IsActive || k.RateLimit != 900 || k.UserID != w.alice || k.SecretRotatedAt == nil {
		t.Fatalf("alice's key %+v %v", k, err)
	}
	raw, _ := json.Marshal(k)
	if strings.Contains(string(raw), w.rotated) || strings.Contains(string(raw), "secret_key") {
		t.Fatalf("a keypair shows its secret: %s", raw)
	}
	keys, err := rm.ListKeypairs(ctx, tenancy.KeypairFilter{UserID: w.alice})
	if err != nil || len(keys) != 2 || keys[0].AccessKey != w.aliceKey.AccessKey || keys[1].IsActive || keys[1].IsMain || keys[1].ResourcePolicy != "big" {
		t.Fatalf("alice's keys %+v %v", keys, err)
	}
	if all, err := rm.ListKeypairs(ctx, tenancy.KeypairFilter{Domain: "acme"}); err != nil || len(all) != 3 {
		t.Fatalf("acme's keys %d %v", len(all), err)
	}
	c, err := rm.Credentials(ctx, w.aliceKey.AccessKey)
	if err != nil || c.SecretKey != w.rotated || !c.MaySign() || c.UserID != w.alice || c.Role != domain.RoleUser || c.Domain != "acme" || c.Email != "Alice@Example.com" {
		t.Fatalf("credentials %+v %v", c, err)
	}
	// Bob is inactive: his active keypair may not sign.
	if c, err := rm.Credentials(ctx, w.bobKey.AccessKey); err != nil || c.SecretKey != w.bobKey.SecretKey || !c.IsActive || c.MaySign() {
		t.Fatalf("bob's credentials %+v %v", c, err)
	}
	if _, err := rm.Credentials(ctx, "AKIAAAAAAAAAAAAAAAAA"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Credentials(unknown) = %v", err)
	}
}

func checkPoliciesGroupsImages(t *testing.T, rm *tenancy.ReadModel, w world) {
	t.Helper()
	kp, err := rm.GetKeypairPolicy(ctx, "default")
	if err != nil || kp.MaxConcurrentSessions != 5 || kp.IdleTimeout != 600 || kp.DefaultForUnspecified != domain.UnspecifiedLimited ||
		kp.TotalResourceSlots[domain.SlotCUDAShares] != projectiontest.Qty("1.5") || len(kp.AllowedVFolderHosts["local"]) != 1 {
		t.Fatalf("keypair policy %+v %v", kp, err)
	}
	if all, err := rm.ListKeypairPolicies(ctx); err != nil || len(all) != 2 || all[0].Name != "big" {
		t.Fatalf("keypair policies %+v %v", all, err)
	}
	up, err := rm.GetUserPolicy(ctx, "default")
	if err != nil || up.MaxVFolderCount != 10 || up.MaxQuotaScopeSize != 1<<40 {
		t.Fatalf("user policy %+v %v", up, err)
	}
	if pp, err := rm.ListProjectPolicies(ctx); err != nil || len(pp) != 1 || pp[0].MaxVFolderCount != 50 {
		t.Fatalf("project policies %+v %v", pp, err)
	}
	if ups, err := rm.ListUserPolicies(ctx); err != nil || len(ups) != 1 {
		t.Fatalf("user policies %+v %v", ups, err)
	}
	if _, err := rm.GetProjectPolicy(ctx, "nope"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetProjectPolicy(nope) = %v", err)
	}

	gpu, err := rm.GetResourceGroup(ctx, "gpu")
	if err != nil || gpu.SchedulerOrder != domain.OrderDRF || !gpu.IsPublic || !gpu.IsActive ||
		!slices.Equal(gpu.Access, []domain.Grantee{{Kind: domain.GranteeProject, Name: "acme/ml"}}) {
		t.Fatalf("gpu %+v %v", gpu, err)
	}
	groups, err := rm.ListResourceGroups(ctx)
	if err != nil || len(groups) != 3 || groups[0].Name != "cpu" || len(groups[0].Access) != 2 || groups[2].Name != "old" || groups[2].IsActive {
		t.Fatalf("groups %+v %v", groups, err)
	}
	for _, c := range []struct {
		domain, project, key string
		want                 []string
	}{
		{"acme", "ml", w.aliceKey.AccessKey, []string{"cpu", "gpu"}},
		{"acme", "cv", w.aliceKey.AccessKey, []string{"cpu"}},
		{"other", "ml", w.bobKey.AccessKey, []string{"cpu"}},
		{"other", "ml", w.aliceKey.AccessKey, []string{}},
	} {
		got, err := rm.AllowedResourceGroups(ctx, c.domain, c.project, c.key)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("AllowedResourceGroups(%s, %s) = %v %v, want %v", c.domain, c.project, got, err, c.want)
		}
	}

	img, err := rm.GetImage(ctx, "cr.io/pytorch:2.4", "amd64")
	if err != nil || len(img.ServicePorts) != 1 || img.MinResourceSlots[domain.SlotCPU] != domain.Units(1) {
		t.Fatalf("image %+v %v", img, err)
	}
	if _, err := rm.GetImage(ctx, "cr.io/tf:2.15", "x86_64"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a forgotten image: %v", err)
	}
	if all, err := rm.ListImages(ctx); err != nil || len(all) != 1 {
		t.Fatalf("images %+v %v", all, err)
	}
}

func checkTokens(t *testing.T, rm *tenancy.ReadModel, w world) {
	t.Helper()
	g, err := rm.TokenByDigest(ctx, digest1)
	if err != nil || g.ID != w.tokens[0] || g.UserID != w.alice || g.Kind != domain.TokenBearer || g.Revoked() ||
		g.Email != "Alice@Example.com" || g.Role != domain.RoleUser || g.Domain != "acme" || g.UserStatus != domain.UserActive ||
		g.MainAccessKey != w.aliceKey.AccessKey || !g.ExpiresAt.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("token by digest %+v %v", g, err)
	}
	if g, err := rm.TokenByDigest(ctx, digest2); err != nil || !g.Revoked() {
		t.Fatalf("revoked token %+v %v", g, err)
	}
	if _, err := rm.TokenByDigest(ctx, strings.Repeat("0", 64)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown digest: %v", err)
	}
	list, err := rm.ListTokens(ctx, w.alice)
	if err != nil || len(list) != 2 || list[0].ID != w.tokens[0] || list[1].RevokedAt == nil || list[0].Description != "token 6b86" {
		t.Fatalf("alice's tokens %+v %v", list, err)
	}
	raw, _ := json.Marshal(list)
	if strings.Contains(string(raw), digest1) {
		t.Fatalf("a token listing shows its digest: %s", raw)
	}
	if one, err := rm.GetToken(ctx, w.tokens[1]); err != nil || one.ID != w.tokens[1] {
		t.Fatalf("get token %+v %v", one, err)
	}
	if known, err := rm.HasImage(ctx, "cr.io/pytorch:2.4"); err != nil || !known {
		t.Fatalf("HasImage(pytorch) = %v %v", known, err)
	}
	if known, err := rm.HasImage(ctx, "cr.io/tf:2.15"); err != nil || known {
		t.Fatalf("HasImage(a forgotten image) = %v %v", known, err)
	}
}

func dump(t *testing.T, db *projections.DB) []string {
	t.Helper()
	var out []string
	for _, tbl := range []struct {
		name  string
		ncols int
		order string
	}{
		{"domains", 8, "name"}, {"projects", 10, "domain, name"}, {"project_members", 5, "domain, project, user_id"},
		{"users", 14, "id"}, {"keypairs", 11, "access_key"}, {"keypair_resource_policies", 5, "name"},
		{"user_resource_policies", 6, "name"}, {"project_resource_policies", 6, "name"}, {"resource_groups", 6, "name"},
		{"resource_group_access", 5, "resource_group, kind, name"}, {"images", 6, "reference, architecture"},
		{"tokens", 9, "id"},
	} {
		rows := projectiontest.Dump(t, db, tbl.name, tbl.ncols, tbl.order)
		for _, r := range rows {
			out = append(out, tbl.name+": "+r)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
