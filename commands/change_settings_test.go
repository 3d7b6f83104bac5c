package commands_test

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestChangeSettings: only superadmins change settings; one request is
// one append of one event per changed key, all or nothing; a default
// keypair policy must exist, and a keypair issued without a policy then
// gets it.
func TestChangeSettings(t *testing.T) {
	t.Parallel()
	e := newTenancyEnv(t)
	e.seed(t)
	h := e.handlers
	stream := domain.SettingsStream().String()

	for _, who := range []commands.Principal{acmeAdmin, acmeUser, acmeMon} {
		_, err := h.ChangeSettings.Handle(ctx, e.md, commands.ChangeSettings{Actor: who,
			Changes: map[domain.SettingKey]string{domain.SettingVFolderMaxUpload: "1"}})
		wantKind(t, err, domain.KindForbidden)
	}
	// Every bad key at once, and nothing written.
	_, err := h.ChangeSettings.Handle(ctx, e.md, commands.ChangeSettings{Actor: superadmin, Changes: map[domain.SettingKey]string{
		domain.SettingVFolderMaxUpload: "1024", domain.SettingSessionIdleTimeout: "-5", "nope": "x"}})
	wantKind(t, err, domain.KindInvalid)
	if got := e.types(t, stream); len(got) != 0 {
		t.Fatalf("a refused change wrote %v", got)
	}
	// A policy that does not exist.
	_, err = h.ChangeSettings.Handle(ctx, e.md, commands.ChangeSettings{Actor: superadmin, Changes: map[domain.SettingKey]string{
		domain.SettingKeypairDefaultPolicy: "huge"}})
	wantKind(t, err, domain.KindInvalid)

	res, err := h.ChangeSettings.Handle(ctx, md("settings-1"), commands.ChangeSettings{Actor: superadmin, Changes: map[domain.SettingKey]string{
		domain.SettingVFolderMaxUpload: "1024", domain.SettingKeypairDefaultPolicy: "default"}})
	if err != nil || res.Position == 0 {
		t.Fatalf("%+v %v", res, err)
	}
	recs := e.read(t, stream)
	wantTypes(t, e.types(t, stream), domain.TypeSettingChanged, domain.TypeSettingChanged)
	if recs[0].Position+1 != recs[1].Position || recs[1].Position != res.Position {
		t.Fatalf("not one append: positions %d, %d (result %d)", recs[0].Position, recs[1].Position, res.Position)
	}
	events := decode(t, recs)
	first := events[0].Event.(domain.SettingChanged)
	if first.Key != domain.SettingKeypairDefaultPolicy || first.Old != "" || first.New != "default" || first.Actor != superadmin.UserID.String() || !first.At.Equal(t0) {
		t.Fatalf("%+v", first)
	}
	// The same values again: nothing.
	again, err := h.ChangeSettings.Handle(ctx, md("settings-2"), commands.ChangeSettings{Actor: superadmin, Changes: map[domain.SettingKey]string{
		domain.SettingVFolderMaxUpload: "1024"}})
	if err != nil || again.Position != res.Position || len(e.read(t, stream)) != 2 {
		t.Fatalf("a no-op change: %+v %v", again, err)
	}

	// A keypair issued without a policy takes the default one.
	alice := e.createUser(t, acmeAdmin, "acme", "alice@example.com", domain.RoleUser)
	k, err := h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: acmeAdmin, UserID: alice})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.keypair(t, k.AccessKey).ResourcePolicy(); got != "default" {
		t.Fatalf("the keypair's policy is %q", got)
	}
	// Cleared, a request must name one again.
	must(t)(h.ChangeSettings.Handle(ctx, md("settings-3"), commands.ChangeSettings{Actor: superadmin, Changes: map[domain.SettingKey]string{
		domain.SettingKeypairDefaultPolicy: ""}}))
	_, err = h.IssueKeypair.Handle(ctx, e.md, commands.IssueKeypair{Actor: acmeAdmin, UserID: alice})
	wantKind(t, err, domain.KindInvalid)
}

// TestSettingsOptions: defaults that are not valid values are refused at
// construction.
func TestSettingsOptions(t *testing.T) {
	t.Parallel()
	_, err := commands.NewHandlers(openStore(t), func() time.Time { return t0 }, commands.Options{Settings: domain.SettingDefaults{domain.SettingVFolderMaxUpload: "-1"}})
	if err == nil {
		t.Fatal("a negative upload limit was taken as a default")
	}
}
