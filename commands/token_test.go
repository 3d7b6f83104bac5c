package commands_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const digest = "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"

func TestIssueAndRevokeToken(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	alice := e.createUser(t, acmeAdmin, "acme", "alice@example.com", domain.RoleUser)
	bob := e.createUser(t, acmeAdmin, "acme", "bob@example.com", domain.RoleUser)
	root := e.createUser(t, superadmin, "acme", "root@example.com", domain.RoleSuperadmin)
	aliceP := commands.Principal{UserID: alice, Role: domain.RoleUser, Domain: "acme"}
	bobP := commands.Principal{UserID: bob, Role: domain.RoleUser, Domain: "acme"}
	issue := func(actor commands.Principal, user uuid.UUID) (commands.IssueTokenResult, error) {
		return h.IssueToken.Handle(ctx, e.md, commands.IssueToken{Actor: actor, UserID: user, Kind: domain.TokenBearer,
			Digest: digest, Description: "ci", ExpiresAt: e.clock.Now().Add(time.Hour)})
	}

	res, err := issue(aliceP, alice)
	if err != nil {
		t.Fatal(err)
	}
	recs := e.read(t, domain.TokenStream(res.TokenID).String())
	if len(recs) != 1 || recs[0].Type != domain.TypeTokenIssued || res.Position != recs[0].Position {
		t.Fatalf("token stream %+v, result %+v", recs, res)
	}
	var ev domain.TokenIssued
	if err := json.Unmarshal(recs[0].Data, &ev); err != nil || ev.UserID != alice || ev.Domain != "acme" || ev.Digest != digest {
		t.Fatalf("event %+v (%v)", ev, err)
	}

	// Who may issue for whom.
	_, err = issue(bobP, alice)
	wantKind(t, err, domain.KindForbidden)
	_, err = issue(otherAdmin, alice)
	wantKind(t, err, domain.KindNotFound)
	_, err = issue(acmeAdmin, alice)
	wantKind(t, err, domain.KindForbidden)
	if _, err := issue(superadmin, alice); err != nil {
		t.Fatal(err)
	}
	_, err = issue(aliceP, uuid.New())
	wantKind(t, err, domain.KindNotFound)
	_, err = h.IssueToken.Handle(ctx, e.md, commands.IssueToken{Actor: aliceP, UserID: alice, Kind: "cookie", Digest: strings.ToUpper(digest)})
	wantKind(t, err, domain.KindInvalid)

	// An inactive user gets no token.
	must(t)(h.ModifyUser.Handle(ctx, e.md, commands.ModifyUser{Actor: acmeAdmin, UserID: bob, Changes: domain.UserChanges{Status: ptr(domain.UserInactive)}}))
	_, err = issue(bobP, bob)
	wantKind(t, err, domain.KindForbidden)

	// Revocation: not by another user, by the holder, again (no event),
	// by a domain admin; a superadmin's only by a superadmin.
	revoke := func(actor commands.Principal, id uuid.UUID) error {
		_, err := h.RevokeToken.Handle(ctx, e.md, commands.RevokeToken{Actor: actor, TokenID: id})
		return err
	}
	wantKind(t, revoke(bobP, res.TokenID), domain.KindForbidden)
	wantKind(t, revoke(otherAdmin, res.TokenID), domain.KindNotFound)
	wantKind(t, revoke(aliceP, uuid.New()), domain.KindNotFound)
	if err := revoke(aliceP, res.TokenID); err != nil {
		t.Fatal(err)
	}
	if err := revoke(aliceP, res.TokenID); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.TokenStream(res.TokenID).String()), domain.TypeTokenIssued, domain.TypeTokenRevoked)
	second, err := issue(aliceP, alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := revoke(acmeAdmin, second.TokenID); err != nil {
		t.Fatal(err)
	}
	rootP := commands.Principal{UserID: root, Role: domain.RoleSuperadmin, Domain: "acme"}
	rootToken, err := issue(rootP, root)
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, revoke(acmeAdmin, rootToken.TokenID), domain.KindForbidden)
	if err := revoke(superadmin, rootToken.TokenID); err != nil {
		t.Fatal(err)
	}
}
