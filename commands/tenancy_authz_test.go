package commands_test

import (
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// ok marks an authorized call in the matrix.
const ok = domain.Kind(255)

// TestTenancyAuthorizationMatrix runs every tenancy command as each role,
// on an object of the actor's own domain (acme) and of another one: what
// is forbidden is KindForbidden at home and exactly KindNotFound abroad.
func TestTenancyAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	alice := e.createUser(t, superadmin, "acme", "alice@example.com", domain.RoleUser)
	root := e.createUser(t, superadmin, "acme", "root@example.com", domain.RoleSuperadmin)
	key, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: superadmin, UserID: alice, ResourcePolicy: "default"})
	if err != nil {
		t.Fatal(err)
	}
	must(t)(h.CreateResourceGroup.Handle(ctx, e.md, commands.CreateResourceGroup{Actor: superadmin, Name: "gpu"}))

	actors := []commands.Principal{superadmin, acmeAdmin, acmeUser, acmeMon, otherAdmin}
	F, NF := domain.KindForbidden, domain.KindNotFound
	cases := []struct {
		name string
		run  func(a commands.Principal, n string) error
		want [5]domain.Kind // superadmin, acme admin, acme user, acme monitor, other admin
	}{
		{"create domain", func(a commands.Principal, n string) error {
			_, err := h.CreateDomain.Handle(ctx, e.md, commands.CreateDomain{Actor: a, Spec: domain.DomainSpec{Name: "d" + n}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify domain", func(a commands.Principal, n string) error {
			_, err := h.ModifyDomain.Handle(ctx, e.md, commands.ModifyDomain{Actor: a, Name: "acme", Changes: domain.DomainChanges{Description: ptr(n)}})
			return err
		}, [5]domain.Kind{ok, F, F, F, NF}},
		{"create project", func(a commands.Principal, n string) error {
			_, err := h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: a, Spec: domain.ProjectSpec{Domain: "acme", Name: "p" + n}})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"modify project", func(a commands.Principal, n string) error {
			_, err := h.ModifyProject.Handle(ctx, e.md, commands.ModifyProject{Actor: a, Domain: "acme", Name: "ml", Changes: domain.ProjectChanges{Description: ptr(n)}})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"add member", func(a commands.Principal, n string) error {
			_, err := h.AddProjectMember.Handle(ctx, e.md, commands.AddProjectMember{Actor: a, Domain: "acme", Project: "ml", UserID: alice})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"remove member", func(a commands.Principal, n string) error {
			_, err := h.RemoveProjectMember.Handle(ctx, e.md, commands.RemoveProjectMember{Actor: a, Domain: "acme", Project: "ml", UserID: alice})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"create user", func(a commands.Principal, n string) error {
			_, err := h.CreateUser.Handle(ctx, md("u"+n), commands.CreateUser{Actor: a, Spec: domain.UserSpec{Email: "u" + n + "@example.com", Domain: "acme"}, Password: "long enough"})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"create a superadmin", func(a commands.Principal, n string) error {
			_, err := h.CreateUser.Handle(ctx, md("s"+n), commands.CreateUser{Actor: a, Spec: domain.UserSpec{Email: "s" + n + "@example.com", Domain: "acme", Role: domain.RoleSuperadmin}, Password: "long enough"})
			return err
		}, [5]domain.Kind{ok, F, F, F, NF}},
		{"modify user", func(a commands.Principal, n string) error {
			_, err := h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: a, UserID: alice, Changes: domain.UserChanges{FullName: ptr(n)}})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"modify a superadmin", func(a commands.Principal, n string) error {
			_, err := h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: a, UserID: root, Changes: domain.UserChanges{FullName: ptr(n)}})
			return err
		}, [5]domain.Kind{ok, F, F, F, NF}},
		{"promote to superadmin", func(a commands.Principal, n string) error {
			_, err := h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: a, UserID: alice, Changes: domain.UserChanges{Role: ptr(domain.RoleSuperadmin)}})
			if err == nil { // undo, so the next actor meets a plain user again
				_, err = h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: superadmin, UserID: alice, Changes: domain.UserChanges{Role: ptr(domain.RoleUser)}})
			}
			return err
		}, [5]domain.Kind{ok, F, F, F, NF}},
		{"issue keypair", func(a commands.Principal, n string) error {
			_, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: a, UserID: alice, ResourcePolicy: "default"})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"set keypair active", func(a commands.Principal, n string) error {
			_, err := h.SetKeypairActive.Handle(ctx, e.md, commands.SetKeypairActive{Actor: a, AccessKey: key.AccessKey, Active: true})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"modify keypair", func(a commands.Principal, n string) error {
			_, err := h.ModifyKeypair.Handle(ctx, e.md, commands.ModifyKeypair{Actor: a, AccessKey: key.AccessKey, RateLimit: ptr(len(n))})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"rotate someone's secret", func(a commands.Principal, n string) error {
			_, err := h.RotateKeypairSecret.Handle(ctx, e.md, commands.RotateKeypairSecret{Actor: a, AccessKey: key.AccessKey})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"set main keypair", func(a commands.Principal, n string) error {
			_, err := h.SetMainKeypair.Handle(ctx, e.md, commands.SetMainKeypair{Actor: a, UserID: alice, AccessKey: key.AccessKey})
			return err
		}, [5]domain.Kind{ok, ok, F, F, NF}},
		{"create keypair policy", func(a commands.Principal, n string) error {
			_, err := h.CreateKeypairPolicy.Handle(ctx, e.md, commands.CreateKeypairPolicy{Actor: a, Name: "k" + n})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify keypair policy", func(a commands.Principal, n string) error {
			_, err := h.ModifyKeypairPolicy.Handle(ctx, e.md, commands.ModifyKeypairPolicy{Actor: a, Name: "default", Changes: domain.KeypairPolicyChanges{MaxConcurrentSessions: ptr(len(n))}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"create user policy", func(a commands.Principal, n string) error {
			_, err := h.CreateUserPolicy.Handle(ctx, e.md, commands.CreateUserPolicy{Actor: a, Name: "u" + n})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify user policy", func(a commands.Principal, n string) error {
			_, err := h.ModifyUserPolicy.Handle(ctx, e.md, commands.ModifyUserPolicy{Actor: a, Name: "default", Changes: domain.StoragePolicyChanges{MaxVFolderCount: ptr(len(n))}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"create project policy", func(a commands.Principal, n string) error {
			_, err := h.CreateProjectPolicy.Handle(ctx, e.md, commands.CreateProjectPolicy{Actor: a, Name: "p" + n})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify project policy", func(a commands.Principal, n string) error {
			_, err := h.ModifyProjectPolicy.Handle(ctx, e.md, commands.ModifyProjectPolicy{Actor: a, Name: "default", Changes: domain.StoragePolicyChanges{MaxVFolderCount: ptr(len(n))}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"create resource group", func(a commands.Principal, n string) error {
			_, err := h.CreateResourceGroup.Handle(ctx, e.md, commands.CreateResourceGroup{Actor: a, Name: "rg" + n})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify resource group", func(a commands.Principal, n string) error {
			_, err := h.ModifyResourceGroup.Handle(ctx, e.md, commands.ModifyResourceGroup{Actor: a, Name: "gpu", Changes: domain.ResourceGroupChanges{Description: ptr(n)}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"grant resource group", func(a commands.Principal, n string) error {
			_, err := h.GrantResourceGroupAccess.Handle(ctx, e.md, commands.GrantResourceGroupAccess{Actor: a, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "acme"}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"revoke resource group", func(a commands.Principal, n string) error {
			_, err := h.RevokeResourceGroupAccess.Handle(ctx, e.md, commands.RevokeResourceGroupAccess{Actor: a, ResourceGroup: "gpu", Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "acme"}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"register image", func(a commands.Principal, n string) error {
			_, err := h.RegisterImage.Handle(ctx, e.md, commands.RegisterImage{Actor: a, Reference: "cr.io/i" + n + ":1", Architecture: "x86_64"})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
		{"modify image", func(a commands.Principal, n string) error {
			_, err := h.ModifyImage.Handle(ctx, e.md, commands.ModifyImage{Actor: a, Reference: "cr.io/x:1", Architecture: "x86_64"})
			return err
		}, [5]domain.Kind{NF, F, F, F, F}},
		{"forget image", func(a commands.Principal, n string) error {
			_, err := h.ForgetImage.Handle(ctx, e.md, commands.ForgetImage{Actor: a, Reference: "cr.io/x:1", Architecture: "x86_64"})
			return err
		}, [5]domain.Kind{NF, F, F, F, F}},
	}
	covered := map[string]bool{}
	for i, c := range cases {
		// Refused actors first, so a success cannot change what they meet.
		order := []int{4, 3, 2, 1, 0}
		for _, ai := range order {
			err := c.run(actors[ai], fmt.Sprintf("%d%d", i, ai))
			got := ok
			if err != nil {
				got = domain.KindOf(err)
			}
			if got != c.want[ai] {
				t.Errorf("%s as %s of %s: %v (kind %v), want %v", c.name, actors[ai].Role, actors[ai].Domain, err, got, c.want[ai])
			}
		}
		covered[c.name] = true
	}
	// Not found from another domain looks exactly like not found.
	_, abroad := h.ModifyProject.Handle(ctx, e.md, commands.ModifyProject{Actor: otherAdmin, Domain: "acme", Name: "ml"})
	_, missing := h.ModifyProject.Handle(ctx, e.md, commands.ModifyProject{Actor: otherAdmin, Domain: "other", Name: "nope"})
	if abroad == nil || missing == nil || abroad.Error() != missing.Error() {
		t.Fatalf("abroad %q, missing %q", abroad, missing)
	}
}
