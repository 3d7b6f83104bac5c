package managertest

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// Superadmin is the principal the fixtures administrate with.
var Superadmin = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000aa"), Role: domain.RoleSuperadmin, Domain: "default"}

// TenantSpec shapes a tenant: the domain acme with its totals, the
// project acme/ml with its totals, and one user with two keypairs, its
// main one under the policy "main" and another under the policy "other".
type TenantSpec struct {
	DomainTotal  domain.Slots
	ProjectTotal domain.Slots
	MainPolicy   domain.KeypairPolicySpec
	OtherPolicy  domain.KeypairPolicySpec
}

// Tenant is the user a TenantSpec made and its keypairs.
type Tenant struct {
	UserID uuid.UUID
	// Main is the access key of the user's main keypair, Other of its
	// second one.
	Main, Other string
}

// plainHasher stands in for argon2id in the harness: the fixtures' users
// never log in.
type plainHasher struct{}

func (plainHasher) Hash(password string) (string, error) { return "plain$" + password, nil }

// Tenant creates a TenantSpec's objects through the tenancy commands.
func (e *Env) Tenant(spec TenantSpec) Tenant {
	e.T.Helper()
	ctx, h, md := context.Background(), e.Handlers, e.MD
	check := func(_ any, err error) {
		e.T.Helper()
		if err != nil {
			e.T.Fatal(err)
		}
	}
	check(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: Superadmin, Name: "main", Spec: spec.MainPolicy}))
	check(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: Superadmin, Name: "other", Spec: spec.OtherPolicy}))
	check(h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: Superadmin, Spec: domain.DomainSpec{Name: "acme", TotalResourceSlots: spec.DomainTotal}}))
	check(h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: Superadmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "ml", TotalResourceSlots: spec.ProjectTotal}}))
	u, err := h.CreateUser.Handle(ctx, md, commands.CreateUser{Actor: Superadmin, Spec: domain.UserSpec{Email: "ada@acme.test", Domain: "acme"}, Password: "correct-horse"})
	if err != nil {
		e.T.Fatal(err)
	}
	main, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: Superadmin, UserID: u.UserID, ResourcePolicy: "main", Main: true})
	if err != nil {
		e.T.Fatal(err)
	}
	other, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: Superadmin, UserID: u.UserID, ResourcePolicy: "other"})
	if err != nil {
		e.T.Fatal(err)
	}
	return Tenant{UserID: u.UserID, Main: main.AccessKey, Other: other.AccessKey}
}

// Session is an interactive session of the tenant's user, made with the
// access key, in acme/ml, with one kernel of the slots per kernel.
func (t Tenant) Session(accessKey string, size int, slots domain.Slots) domain.SessionSpec {
	return domain.SessionSpec{
		Name: "nb", Owner: domain.Owner{UserID: t.UserID.String(), AccessKey: accessKey},
		Domain: "acme", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionInteractive, Image: "cr.io/jupyter:1", ClusterSize: size, Resources: slots,
	}
}
