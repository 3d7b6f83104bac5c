package httpauth

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// The cache keeps the real read model's answers exactly while the
// freshness positions say nothing changed after they were read: an
// answer read at committed position p is reused while no tenancy event
// after p was applied, and dropped when one was, or when the committed
// position moved back (a rebuild).
func TestCacheLastsUntilTheReadModelChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := projectiontest.SQLite(t)
	rm := tenancy.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	run := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{PasswordHasher: password.Hasher{Params: password.CheapParams()}})
	if err != nil {
		t.Fatal(err)
	}
	root := commands.Principal{Role: domain.RoleSuperadmin, Domain: "d"}
	md := projectiontest.MD
	if _, err := h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: root, Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: root, Spec: domain.DomainSpec{Name: "d"}}); err != nil {
		t.Fatal(err)
	}
	u, err := h.CreateUser.Handle(ctx, md, commands.CreateUser{Actor: root, Spec: domain.UserSpec{Email: "a@example.com", Domain: "d"}, Password: "long enough"})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: root, UserID: u.UserID, ResourcePolicy: "p"})
	if err != nil {
		t.Fatal(err)
	}
	run.WaitFor(t, kp.Position)

	var committed, changed atomic.Uint64
	committed.Store(kp.Position)
	changed.Store(kp.Position)
	c := newCachingDirectory(rm, Freshness{Committed: committed.Load, Changed: changed.Load}, 0)
	secret := func() string {
		t.Helper()
		cr, err := c.Credentials(ctx, kp.AccessKey)
		if err != nil {
			t.Fatal(err)
		}
		return cr.SecretKey
	}
	if secret() != kp.SecretKey {
		t.Fatal("first lookup")
	}
	rot, err := h.RotateKeypairSecret.Handle(ctx, md, commands.RotateKeypairSecret{Actor: root, AccessKey: kp.AccessKey})
	if err != nil {
		t.Fatal(err)
	}
	run.WaitFor(t, rot.Position)
	// The positions say nothing changed: the cached answer is served.
	if secret() != kp.SecretKey {
		t.Fatal("the cache was not used")
	}
	// A tenancy event after the lookup (even uncommitted) drops it.
	changed.Store(rot.Position)
	if secret() != rot.SecretKey {
		t.Fatal("a change did not drop the cached answer")
	}
	// Read at kp.Position (committed had not moved): still stale-proof
	// once committed catches up and nothing else changes.
	committed.Store(rot.Position)
	if secret() != rot.SecretKey {
		t.Fatal("fresh lookup")
	}
	// The committed position moving back (a rebuild) drops everything.
	committed.Store(1)
	if _, ok := c.get("k:" + kp.AccessKey); ok {
		t.Fatal("an answer read after position 1 survived the checkpoint moving back")
	}
	// Misses are not kept.
	if _, err := c.Credentials(ctx, "AKIAAAAAAAAAAAAAAAAA"); err == nil {
		t.Fatal("an unknown key was found")
	}
	if _, ok := c.get("k:AKIAAAAAAAAAAAAAAAAA"); ok {
		t.Fatal("a miss was cached")
	}
	if rm.LastApplied() < rot.Position {
		t.Fatalf("LastApplied %d, want at least %d", rm.LastApplied(), rot.Position)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, Config{}); err == nil {
		t.Fatal("no directory accepted")
	}
	if _, err := New(&tenancy.ReadModel{}, Config{MaxSkew: -1}); err == nil {
		t.Fatal("negative skew accepted")
	}
}
