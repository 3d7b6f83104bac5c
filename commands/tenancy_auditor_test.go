package commands_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestAuditorRoles: only superadmins make auditors (all domains) and act
// on them, since whoever could act on an auditor (its keypairs, its
// password) could read every domain's trail as them; a domain's admin
// makes and manages domain auditors of its domain; auditors administer
// nothing.
func TestAuditorRoles(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	alice := e.createUser(t, superadmin, "acme", "alice@example.com", domain.RoleUser)
	auditor := e.createUser(t, superadmin, "acme", "auditor@example.com", domain.RoleAuditor)
	dauditor := e.createUser(t, superadmin, "acme", "dauditor@example.com", domain.RoleDomainAuditor)
	acmeAuditor := commands.Principal{UserID: auditor, Role: domain.RoleAuditor, Domain: "acme"}
	acmeDomainAuditor := commands.Principal{UserID: dauditor, Role: domain.RoleDomainAuditor, Domain: "acme"}

	actors := []commands.Principal{superadmin, acmeAdmin, otherAdmin, acmeAuditor, acmeDomainAuditor}
	F, NF := domain.KindForbidden, domain.KindNotFound
	create := func(role domain.Role) func(commands.Principal, string) error {
		return func(a commands.Principal, n string) error {
			_, err := h.CreateUser.Handle(ctx, md("c"+n), commands.CreateUser{Actor: a,
				Spec: domain.UserSpec{Email: "c" + n + "@example.com", Domain: "acme", Role: role}, Password: "long enough"})
			return err
		}
	}
	promote := func(role domain.Role) func(commands.Principal, string) error {
		return func(a commands.Principal, n string) error {
			_, err := h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: a, UserID: alice, Changes: domain.UserChanges{Role: ptr(role)}})
			if err == nil { // undo, so the next actor meets a plain user again
				_, err = h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: superadmin, UserID: alice, Changes: domain.UserChanges{Role: ptr(domain.RoleUser)}})
			}
			return err
		}
	}
	rename := func(user uuid.UUID) func(commands.Principal, string) error {
		return func(a commands.Principal, n string) error {
			_, err := h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: a, UserID: user, Changes: domain.UserChanges{FullName: ptr(n)}})
			return err
		}
	}
	issue := func(user uuid.UUID) func(commands.Principal, string) error {
		return func(a commands.Principal, n string) error {
			_, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: a, UserID: user, ResourcePolicy: "default"})
			return err
		}
	}
	cases := []struct {
		name string
		run  func(a commands.Principal, n string) error
		want [5]domain.Kind // superadmin, acme admin, other admin, auditor, domain auditor
	}{
		{"create an auditor", create(domain.RoleAuditor), [5]domain.Kind{ok, F, NF, F, F}},
		{"create a domain auditor", create(domain.RoleDomainAuditor), [5]domain.Kind{ok, ok, NF, F, F}},
		{"create a user", create(domain.RoleUser), [5]domain.Kind{ok, ok, NF, F, F}},
		{"promote to auditor", promote(domain.RoleAuditor), [5]domain.Kind{ok, F, NF, F, F}},
		{"promote to domain auditor", promote(domain.RoleDomainAuditor), [5]domain.Kind{ok, ok, NF, F, F}},
		{"modify an auditor", rename(auditor), [5]domain.Kind{ok, F, NF, F, F}},
		{"modify a domain auditor", rename(dauditor), [5]domain.Kind{ok, ok, NF, F, F}},
		{"issue an auditor's keypair", issue(auditor), [5]domain.Kind{ok, F, NF, F, F}},
		{"issue a domain auditor's keypair", issue(dauditor), [5]domain.Kind{ok, ok, NF, F, F}},
		{"create a project", func(a commands.Principal, n string) error {
			_, err := h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: a, Spec: domain.ProjectSpec{Domain: "acme", Name: "p" + n}})
			return err
		}, [5]domain.Kind{ok, ok, NF, F, F}},
		{"create a domain", func(a commands.Principal, n string) error {
			_, err := h.CreateDomain.Handle(ctx, e.md, commands.CreateDomain{Actor: a, Spec: domain.DomainSpec{Name: "d" + n}})
			return err
		}, [5]domain.Kind{ok, F, F, F, F}},
	}
	for i, c := range cases {
		// Refused actors first, so a success cannot change what they meet.
		for _, ai := range []int{4, 3, 2, 1, 0} {
			err := c.run(actors[ai], fmt.Sprintf("%d%d", i, ai))
			got := ok
			if err != nil {
				got = domain.KindOf(err)
			}
			if got != c.want[ai] {
				t.Errorf("%s as %s of %s: %v (kind %v), want %v", c.name, actors[ai].Role, actors[ai].Domain, err, got, c.want[ai])
			}
		}
	}
}
