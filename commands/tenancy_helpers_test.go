package commands_test

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// testHasher stands in for argon2id: a salted SHA-256, enough to tell that
// the plaintext never reaches an event.
type testHasher struct{}

func (testHasher) Hash(password string) (string, error) {
	sum := sha256.Sum256([]byte("salt:" + password))
	return "test$" + hex.EncodeToString(sum[:]), nil
}

// manualClock is a clock the test moves.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// tenancyEnv is a store with handlers that hash passwords, a clock the
// test moves, and a few principals.
type tenancyEnv struct {
	*env
	clock *manualClock
}

var (
	superadmin = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-00000000000a"), Role: domain.RoleSuperadmin, Domain: "default"}
	acmeAdmin  = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-00000000000b"), Role: domain.RoleAdmin, Domain: "acme"}
	acmeUser   = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-00000000000c"), Role: domain.RoleUser, Domain: "acme"}
	acmeMon    = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-00000000000d"), Role: domain.RoleMonitor, Domain: "acme"}
	otherAdmin = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-00000000000e"), Role: domain.RoleAdmin, Domain: "other"}
)

func newTenancyEnv(t testing.TB) *tenancyEnv {
	t.Helper()
	store := openStore(t)
	clock := &manualClock{now: t0}
	h, err := commands.NewHandlers(store, clock.Now, commands.Options{PasswordHasher: testHasher{}})
	if err != nil {
		t.Fatal(err)
	}
	return &tenancyEnv{env: &env{store: store, handlers: h, md: commands.Metadata{Actor: "admin", RequestID: "req-1"}}, clock: clock}
}

// md returns metadata with its own request id.
func md(requestID string) commands.Metadata {
	return commands.Metadata{Actor: "admin", RequestID: requestID}
}

// seed creates the domains acme and other, the default policies, the
// project acme/ml, and returns the env.
func (e *tenancyEnv) seed(t testing.TB) {
	t.Helper()
	h := e.handlers
	must(t)(h.CreateKeypairPolicy.Handle(ctx, e.md, commands.CreateKeypairPolicy{Actor: superadmin, Name: "default",
		Spec: domain.KeypairPolicySpec{TotalResourceSlots: domain.Slots{domain.SlotCPU: domain.Units(8)}, MaxConcurrentSessions: 3}}))
	must(t)(h.CreateUserPolicy.Handle(ctx, e.md, commands.CreateUserPolicy{Actor: superadmin, Name: "default", Spec: domain.StoragePolicySpec{MaxVFolderCount: 10}}))
	must(t)(h.CreateProjectPolicy.Handle(ctx, e.md, commands.CreateProjectPolicy{Actor: superadmin, Name: "default", Spec: domain.StoragePolicySpec{MaxVFolderCount: 20}}))
	for _, d := range []string{"acme", "other"} {
		must(t)(h.CreateDomain.Handle(ctx, e.md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: d}}))
	}
	must(t)(h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: acmeAdmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "ml", ResourcePolicy: "default"}}))
	must(t)(h.CreateProject.Handle(ctx, e.md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "other", Name: "ml"}}))
}

// createUser creates a user of a domain with its own request id.
func (e *tenancyEnv) createUser(t testing.TB, actor commands.Principal, domainName, email string, role domain.Role) uuid.UUID {
	t.Helper()
	res, err := e.handlers.CreateUser.Handle(ctx, md("create-"+email), commands.CreateUser{Actor: actor,
		Spec: domain.UserSpec{Email: email, Domain: domainName, Role: role, ResourcePolicy: "default"}, Password: "correct horse"})
	if err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return res.UserID
}

func (e *tenancyEnv) user(t testing.TB, id uuid.UUID) *domain.User {
	t.Helper()
	u, err := domain.RehydrateUser(decode(t, e.read(t, domain.UserStream(id).String())))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *tenancyEnv) keypair(t testing.TB, accessKey string) *domain.Keypair {
	t.Helper()
	k, err := domain.RehydrateKeypair(decode(t, e.read(t, domain.KeypairStream(accessKey).String())))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// must fails the test when a handler fails: must(t)(h.X.Handle(...)).
func must(t testing.TB) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
