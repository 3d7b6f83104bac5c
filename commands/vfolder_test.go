package commands_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
)

func TestCreateVFolder(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	if got := e.types(t, owner.Stream().String()); !slices.Equal(got, []string{domain.TypeVFolderNameClaimed}) {
		t.Fatalf("index events %v", got)
	}
	f := e.folder(t, id)
	if f.Name() != "data" || f.Owner() != owner || f.Status() != domain.VFolderReady || !e.storage.has(id) {
		t.Fatalf("folder %+v, directory made %v", f, e.storage.has(id))
	}

	for _, c := range []struct {
		name  string
		actor commands.Principal
		spec  domain.VFolderSpec
		kind  domain.Kind
		field string
	}{
		{"name taken", vfAlice, domain.VFolderSpec{Name: "data", Host: "local"}, domain.KindConflict, ""},
		{"unknown host", vfAlice, domain.VFolderSpec{Name: "x", Host: "tape"}, domain.KindForbidden, ""},
		{"bad name", vfAlice, domain.VFolderSpec{Name: "a/b", Host: "local"}, domain.KindInvalid, "name"},
		{"project folder by a user", vfAlice, domain.VFolderSpec{Name: "p", Host: "local", Owner: commands.ProjectFolderOwner("acme", "ml")}, domain.KindForbidden, ""},
		{"unknown project", vfAdmin, domain.VFolderSpec{Name: "p", Host: "local", Owner: commands.ProjectFolderOwner("acme", "nope")}, domain.KindInvalid, "project"},
		{"no acting user", commands.Principal{}, domain.VFolderSpec{Name: "x", Host: "local"}, domain.KindUnauthenticated, ""},
	} {
		_, err := e.handlers.CreateVFolder.Handle(ctx, e.md, commands.CreateVFolder{Actor: c.actor, Spec: c.spec})
		t.Run(c.name, func(t *testing.T) { wantKindField(t, err, c.kind, c.field) })
	}
	// The same name for another owner is fine.
	e.create(t, vfBob, "data")
	e.create(t, vfAdmin, "data", func(s *domain.VFolderSpec) { s.Owner = commands.ProjectFolderOwner("acme", "ml") })
}

func TestCreateVFolderNeedsConfiguration(t *testing.T) {
	t.Parallel()
	_, err := newEnv(t).handlers.CreateVFolder.Handle(ctx, commands.Metadata{}, commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{Name: "x", Host: "local"}})
	wantKindField(t, err, domain.KindUnavailable, "")
}

// A create whose directory could not be made writes nothing: no claim,
// no folder; a retry with the same id completes it, and repeating the
// completed request is success.
func TestCreateVFolderRetryCompletes(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := uuid.MustParse("0195a0c0-0000-7000-8000-00000000f00d")
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	e.storage.failNext["create"] = domain.Errorf("test", domain.KindUnavailable, "disk away")
	cmd := commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{ID: id, Name: "data", Host: "local"}}
	_, err := e.handlers.CreateVFolder.Handle(ctx, e.md, cmd)
	wantKindField(t, err, domain.KindUnavailable, "")
	if got, folder := e.types(t, owner.Stream().String()), e.types(t, domain.VFolderStream(id).String()); len(got) != 0 || len(folder) != 0 {
		t.Fatalf("a failed create wrote index %v, folder %v", got, folder)
	}
	for range 2 { // the retry, then a repeat of the completed request
		res, err := e.handlers.CreateVFolder.Handle(ctx, e.md, cmd)
		if err != nil || res.FolderID != id {
			t.Fatalf("retry = %+v, %v", res, err)
		}
	}
	if got := e.types(t, owner.Stream().String()); len(got) != 1 || !e.folder(t, id).Exists() || !e.storage.has(id) {
		t.Fatalf("index %v, folder exists %v, directory %v", got, e.folder(t, id).Exists(), e.storage.has(id))
	}
	// Another id cannot take the name; an id reused by another owner is
	// refused.
	_, err = e.handlers.CreateVFolder.Handle(ctx, e.md, commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{Name: "data", Host: "local"}})
	wantKindField(t, err, domain.KindConflict, "")
	_, err = e.handlers.CreateVFolder.Handle(ctx, e.md, commands.CreateVFolder{Actor: vfBob, Spec: domain.VFolderSpec{ID: id, Name: "x", Host: "local"}})
	wantKindField(t, err, domain.KindConflict, "")
}

// The folder's stream and the name's claim are written in one append,
// which carries the request's access record: the record of success is in
// the folder's stream, and nowhere when the create failed.
func TestCreateVFolderAccessRecordRidesWithTheFolder(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	slot := func() commands.Metadata {
		md := e.md
		md.Access = commands.NewAccess(audit.Record{Action: "POST /v1/vfolders", Outcome: audit.Success, Status: 201})
		return md
	}
	e.storage.failNext["create"] = domain.Errorf("test", domain.KindUnavailable, "disk away")
	failed := commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{ID: uuid.New(), Name: "lost", Host: "local"}}
	if _, err := e.handlers.CreateVFolder.Handle(ctx, slot(), failed); err == nil {
		t.Fatal("the create succeeded")
	}
	if got := e.types(t, owner.Stream().String()); len(got) != 0 {
		t.Fatalf("a failed create wrote %v to the index", got)
	}
	res, err := e.handlers.CreateVFolder.Handle(ctx, slot(), commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{Name: "data", Host: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{domain.TypeVFolderCreated, domain.TypeAccessLogged}
	if got := e.types(t, domain.VFolderStream(res.FolderID).String()); !slices.Equal(got, want) {
		t.Fatalf("folder stream %v, want %v", got, want)
	}
	if got := e.types(t, owner.Stream().String()); !slices.Equal(got, []string{domain.TypeVFolderNameClaimed}) {
		t.Fatalf("index %v", got)
	}
	folder, index := e.read(t, domain.VFolderStream(res.FolderID).String()), e.read(t, owner.Stream().String())
	if folder[0].Position >= index[0].Position || index[0].Position-folder[0].Position != 2 {
		t.Fatalf("the folder (at %d) and the claim (at %d) are not one append", folder[0].Position, index[0].Position)
	}
	if res.Position != index[0].Position {
		t.Fatalf("the create answered position %d, want its last event's %d", res.Position, index[0].Position)
	}
}

// A folder created (or cloned) without a quota gets the default; one that
// asks for a quota keeps it.
func TestCreateVFolderDefaultQuota(t *testing.T) {
	t.Parallel()
	e := newVFEnvWith(t, commands.Options{DefaultVFolderQuota: 10 << 30})
	plain := e.create(t, vfAlice, "plain")
	own := e.create(t, vfAlice, "own", func(s *domain.VFolderSpec) { s.Quota = 1 << 20 })
	clone, err := e.handlers.CloneVFolder.Handle(ctx, e.md, commands.CloneVFolder{Actor: vfAlice, SourceID: own, Spec: domain.VFolderSpec{Name: "copy"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   uuid.UUID
		want int64
	}{{plain, 10 << 30}, {own, 1 << 20}, {clone.FolderID, 10 << 30}} {
		if got := e.folder(t, c.id).Quota(); got != c.want {
			t.Errorf("folder %s: quota %d, want %d", c.id, got, c.want)
		}
	}
	if _, err := commands.NewHandlers(e.store, stepClock(), commands.Options{DefaultVFolderQuota: -1}); err == nil {
		t.Error("a negative default quota was accepted")
	}
}

func TestCreateVFolderMaxCount(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	e.tenancy.policies[owner.Stream()] = domain.StoragePolicySpec{MaxVFolderCount: 2}
	e.create(t, vfAlice, "a")
	e.create(t, vfAlice, "b")
	_, err := e.handlers.CreateVFolder.Handle(ctx, e.md, commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{Name: "c", Host: "local"}})
	wantKindField(t, err, domain.KindQuotaExceeded, "max_vfolder_count")
}

func TestRenameVFolder(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	e.create(t, vfAlice, "other")
	rename := func(actor commands.Principal, name string) error {
		_, err := e.handlers.RenameVFolder.Handle(ctx, e.md, commands.RenameVFolder{Actor: actor, FolderID: id, Name: name})
		return err
	}
	wantKindField(t, rename(vfAlice, "other"), domain.KindConflict, "")
	wantKindField(t, rename(vfBob, "mine"), domain.KindNotFound, "")
	if err := rename(vfAlice, "renamed"); err != nil {
		t.Fatal(err)
	}
	x := e.index(t, commands.UserFolderOwner(vfAlice.UserID, "acme"))
	if got, _ := x.Lookup("renamed"); got != id || e.folder(t, id).Name() != "renamed" {
		t.Fatalf("index holds %v, folder named %q", got, e.folder(t, id).Name())
	}
	if _, ok := x.Lookup("data"); ok {
		t.Fatal("the old name is still held")
	}
	// The old name is free again.
	e.create(t, vfAlice, "data")
}

// A crash between the index's rename and the folder's leaves the index
// ahead; the same rename completes it.
func TestRenameVFolderRetryCompletes(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	x := e.index(t, owner)
	evs, err := x.Rename(id, "data", "new", t0)
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, e.env, owner.Stream().String(), x.Revision(), evs...)
	if _, err := e.handlers.RenameVFolder.Handle(ctx, e.md, commands.RenameVFolder{Actor: vfAlice, FolderID: id, Name: "new"}); err != nil {
		t.Fatal(err)
	}
	if e.folder(t, id).Name() != "new" || len(e.read(t, owner.Stream().String())) != 3 {
		t.Fatalf("folder %q, index %v", e.folder(t, id).Name(), e.types(t, owner.Stream().String()))
	}
}

func TestVFolderInvitations(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	invite := func(email string) (commands.InviteToVFolderResult, error) {
		return e.handlers.InviteToVFolder.Handle(ctx, e.md, commands.InviteToVFolder{Actor: vfAlice, FolderID: id, Email: email, Permission: domain.VFolderReadOnly})
	}
	_, err := invite("nobody@acme.test")
	wantKindField(t, err, domain.KindInvalid, "email")
	_, err = invite("eve@evil.test") // another domain
	wantKindField(t, err, domain.KindInvalid, "email")
	res, err := invite("bob@acme.test")
	if err != nil || res.Invitee != vfBob.UserID {
		t.Fatalf("invite = %+v, %v", res, err)
	}
	// Only the invitee answers; others do not see the invitation.
	_, err = e.handlers.AcceptVFolderInvitation.Handle(ctx, e.md, commands.AcceptVFolderInvitation{Actor: vfEve, FolderID: id, InvitationID: res.InvitationID})
	wantKindField(t, err, domain.KindNotFound, "")
	if _, err := e.handlers.AcceptVFolderInvitation.Handle(ctx, e.md, commands.AcceptVFolderInvitation{Actor: vfBob, FolderID: id, InvitationID: res.InvitationID}); err != nil {
		t.Fatal(err)
	}
	if perm := e.folder(t, id).Members()[vfBob.UserID.String()]; perm != domain.VFolderReadOnly {
		t.Fatalf("bob's permission %q", perm)
	}
	_, err = e.handlers.RejectVFolderInvitation.Handle(ctx, e.md, commands.RejectVFolderInvitation{Actor: vfBob, FolderID: id, InvitationID: res.InvitationID})
	wantKindField(t, err, domain.KindConflict, "")
	if _, err := e.handlers.LeaveVFolder.Handle(ctx, e.md, commands.LeaveVFolder{Actor: vfBob, FolderID: id}); err != nil {
		t.Fatal(err)
	}
	// Invite again, then cancel.
	res, err = invite("bob@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.handlers.CancelVFolderInvitation.Handle(ctx, e.md, commands.CancelVFolderInvitation{Actor: vfAlice, FolderID: id, InvitationID: res.InvitationID}); err != nil {
		t.Fatal(err)
	}
	if len(e.folder(t, id).Members()) != 0 {
		t.Fatal("bob is still a member")
	}
}

// An e-mail address of an invitation or a per-user permission is judged
// only for whoever may manage the folder: anyone else gets the folder's
// answer (not found, or forbidden), whether the address is known, unknown
// or another domain's, and learns nothing of it.
func TestVFolderAddressesAnsweredToManagersOnly(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	user := e.create(t, vfAlice, "data")
	project := e.create(t, vfAdmin, "shared", func(s *domain.VFolderSpec) { s.Owner = commands.ProjectFolderOwner("acme", "ml") })
	invite := func(actor commands.Principal, email string) error {
		_, err := e.handlers.InviteToVFolder.Handle(ctx, e.md, commands.InviteToVFolder{Actor: actor, FolderID: user, Email: email, Permission: domain.VFolderReadOnly})
		return err
	}
	share := func(actor commands.Principal, email string) error {
		_, err := e.handlers.ShareVFolder.Handle(ctx, e.md, commands.ShareVFolder{Actor: actor, FolderID: project, Email: email, Permission: domain.VFolderReadOnly})
		return err
	}
	unshare := func(actor commands.Principal, email string) error {
		_, err := e.handlers.UnshareVFolder.Handle(ctx, e.md, commands.UnshareVFolder{Actor: actor, FolderID: project, Email: email})
		return err
	}
	for _, email := range []string{"nobody@acme.test", "eve@evil.test", "bob@acme.test"} {
		for _, c := range []struct {
			name string
			do   func(commands.Principal, string) error
			who  commands.Principal
			want domain.Kind
		}{
			{"invite, another tenant", invite, vfEve, domain.KindNotFound},
			{"invite, a stranger", invite, vfBob, domain.KindNotFound},
			{"share, another tenant", share, vfEve, domain.KindNotFound},
			{"share, a member", share, vfAlice, domain.KindForbidden},
			{"unshare, another tenant", unshare, vfEve, domain.KindNotFound},
			{"unshare, a member", unshare, vfAlice, domain.KindForbidden},
		} {
			t.Run(c.name+" "+email, func(t *testing.T) { wantKindField(t, c.do(c.who, email), c.want, "") })
		}
	}
	// The managers learn that an address names no user of the domain.
	for _, email := range []string{"nobody@acme.test", "eve@evil.test"} {
		wantKindField(t, invite(vfAlice, email), domain.KindInvalid, "email")
		wantKindField(t, share(vfAdmin, email), domain.KindInvalid, "email")
		wantKindField(t, unshare(vfAdmin, email), domain.KindInvalid, "email")
	}
	if err := share(vfAdmin, "bob@acme.test"); err != nil {
		t.Fatal(err)
	}
	if got := e.folder(t, project).Overrides(); len(got) != 1 || got[vfBob.UserID.String()] != domain.VFolderReadOnly {
		t.Fatalf("overrides %v", got)
	}
}

func TestShareProjectVFolder(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAdmin, "shared", func(s *domain.VFolderSpec) {
		s.Owner = commands.ProjectFolderOwner("acme", "ml")
		s.Permission = domain.VFolderReadOnly
	})
	share := func(actor commands.Principal, user, email string) error {
		_, err := e.handlers.ShareVFolder.Handle(ctx, e.md, commands.ShareVFolder{Actor: actor, FolderID: id, UserID: user, Email: email, Permission: domain.VFolderRWDelete})
		return err
	}
	wantKindField(t, share(vfAlice, vfBob.UserID.String(), ""), domain.KindForbidden, "")
	wantKindField(t, share(vfAdmin, "", ""), domain.KindInvalid, "user_id")
	if err := share(vfAdmin, "", "bob@acme.test"); err != nil {
		t.Fatal(err)
	}
	f := e.folder(t, id)
	if p, _ := f.EffectivePermission(domain.VFolderViewer{UserID: vfBob.UserID.String(), Domain: "acme", Projects: []string{"acme/ml"}}); p != domain.VFolderRWDelete {
		t.Fatalf("bob's permission %q", p)
	}
	if _, err := e.handlers.UnshareVFolder.Handle(ctx, e.md, commands.UnshareVFolder{Actor: vfAdmin, FolderID: id, UserID: vfBob.UserID.String()}); err != nil {
		t.Fatal(err)
	}
	if len(e.folder(t, id).Overrides()) != 0 {
		t.Fatal("the override is still there")
	}
}

// Trash, restore, trash, delete forever (the jobs manager's part is
// played by FinishVFolderDelete), purge: the name is free again.
func TestVFolderDeleteLifecycle(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	step := func(name string, fn func() (commands.VFolderResult, error), want domain.VFolderStatus) {
		t.Helper()
		if _, err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := e.folder(t, id).Status(); got != want {
			t.Fatalf("after %s: status %s, want %s", name, got, want)
		}
	}
	trash := func() (commands.VFolderResult, error) {
		return e.handlers.TrashVFolder.Handle(ctx, e.md, commands.TrashVFolder{Actor: vfAlice, FolderID: id})
	}
	forever := func() (commands.VFolderResult, error) {
		return e.handlers.DeleteVFolderForever.Handle(ctx, e.md, commands.DeleteVFolderForever{Actor: vfAlice, FolderID: id})
	}
	_, err := forever()
	wantKindField(t, err, domain.KindConflict, "")
	step("trash", trash, domain.VFolderDeletePending)
	step("restore", func() (commands.VFolderResult, error) {
		return e.handlers.RestoreVFolder.Handle(ctx, e.md, commands.RestoreVFolder{Actor: vfAlice, FolderID: id})
	}, domain.VFolderReady)
	step("trash again", trash, domain.VFolderDeletePending)
	step("delete forever", forever, domain.VFolderDeleteOngoing)
	step("failed removal", func() (commands.VFolderResult, error) {
		return e.handlers.FinishVFolderDelete.Handle(ctx, e.md, commands.FinishVFolderDelete{FolderID: id, Message: "busy"})
	}, domain.VFolderDeleteError)
	step("delete forever again", forever, domain.VFolderDeleteOngoing)
	step("removed", func() (commands.VFolderResult, error) {
		return e.handlers.FinishVFolderDelete.Handle(ctx, e.md, commands.FinishVFolderDelete{FolderID: id, OK: true})
	}, domain.VFolderDeleteComplete)
	purge := func(actor commands.Principal) error {
		_, err := e.handlers.PurgeVFolder.Handle(ctx, e.md, commands.PurgeVFolder{Actor: actor, FolderID: id})
		return err
	}
	wantKindField(t, purge(vfBob), domain.KindNotFound, "")
	if err := purge(vfAlice); err != nil {
		t.Fatal(err)
	}
	if e.folder(t, id).Exists() {
		t.Fatal("the purged folder exists")
	}
	wantKindField(t, purge(vfAlice), domain.KindNotFound, "")
	e.create(t, vfAlice, "data")
}

// A purge whose release was lost is completed by purging again.
func TestPurgeVFolderRetryReleases(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	id := e.create(t, vfAlice, "data")
	f := e.folder(t, id)
	appendRaw(t, e.env, domain.VFolderStream(id).String(), f.Revision(),
		domain.VFolderTrashed{By: "x", At: t0}, domain.VFolderDeleteStarted{By: "x", At: t0},
		domain.VFolderDeleteFinished{Status: domain.VFolderDeleteComplete, At: t0}, domain.VFolderPurged{By: "x", At: t0})
	_, err := e.handlers.PurgeVFolder.Handle(ctx, e.md, commands.PurgeVFolder{Actor: vfAlice, FolderID: id})
	wantKindField(t, err, domain.KindNotFound, "")
	if _, held := e.index(t, commands.UserFolderOwner(vfAlice.UserID, "acme")).Lookup("data"); held {
		t.Fatal("the name is still held")
	}
}

func TestCloneVFolder(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	src := e.create(t, vfAlice, "data", func(s *domain.VFolderSpec) { s.Cloneable = true })
	res, err := e.handlers.CloneVFolder.Handle(ctx, e.md, commands.CloneVFolder{Actor: vfAlice, SourceID: src, Spec: domain.VFolderSpec{Name: "copy"}})
	if err != nil {
		t.Fatal(err)
	}
	f := e.folder(t, res.FolderID)
	if f.Status() != domain.VFolderCloning || f.CloneOf() != src || f.Host() != "local" || e.storage.has(res.FolderID) {
		t.Fatalf("clone %+v, directory made %v", f, e.storage.has(res.FolderID))
	}
	if _, err := e.handlers.FinishVFolderClone.Handle(ctx, e.md, commands.FinishVFolderClone{FolderID: res.FolderID, OK: true}); err != nil {
		t.Fatal(err)
	}
	if e.folder(t, res.FolderID).Status() != domain.VFolderReady {
		t.Fatal("the clone is not ready")
	}
	_, err = e.handlers.CloneVFolder.Handle(ctx, e.md, commands.CloneVFolder{Actor: vfBob, SourceID: src, Spec: domain.VFolderSpec{Name: "x"}})
	wantKindField(t, err, domain.KindNotFound, "")
}

func TestAuthorizeVFolderFiles(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	a := e.create(t, vfAlice, "a", func(s *domain.VFolderSpec) { s.Quota = 1000 })
	b := e.create(t, vfAlice, "b")
	auth := func(actor commands.Principal, id uuid.UUID, write, remove bool) (commands.VFolderFilesGrant, error) {
		return e.handlers.AuthorizeVFolderFiles.Handle(ctx, e.md, commands.AuthorizeVFolderFiles{Actor: actor, FolderID: id, Write: write, Remove: remove})
	}
	g, err := auth(vfAlice, a, true, false)
	if err != nil || g.Quota != 1000 || g.Host != "local" || g.Permission != domain.VFolderRWDelete {
		t.Fatalf("grant %+v, %v", g, err)
	}
	// The quota scope lowers the folder's quota to what the others leave.
	e.tenancy.policies[owner.Stream()] = domain.StoragePolicySpec{MaxQuotaScopeSize: 1500}
	e.storage.folders[b] = 700
	if g, err := auth(vfAlice, a, true, false); err != nil || g.Quota != 800 {
		t.Fatalf("grant %+v, %v; want quota 800", g, err)
	}
	e.storage.folders[b] = 1500
	_, err = auth(vfAlice, a, true, false)
	wantKindField(t, err, domain.KindQuotaExceeded, "max_quota_scope_size")
	if g, err := auth(vfAlice, a, false, false); err != nil || g.Quota != 0 {
		t.Fatalf("a read: %+v, %v", g, err)
	}
	_, err = auth(vfBob, a, false, false)
	wantKindField(t, err, domain.KindNotFound, "")
}

func TestRequestSessionMounts(t *testing.T) {
	t.Parallel()
	e := newVFEnv(t)
	data := e.create(t, vfAlice, "data")
	dot := e.create(t, vfAlice, ".config")
	e.create(t, vfAdmin, "shared", func(s *domain.VFolderSpec) {
		s.Owner = commands.ProjectFolderOwner("acme", "ml")
		s.Permission = domain.VFolderReadOnly
	})
	bobs := e.create(t, vfBob, "bobs")
	spec := sessionSpec("")
	spec.Domain, spec.Project = "acme", "ml"
	request := func(actor commands.Principal, mounts ...domain.VFolderMountRequest) (commands.RequestSessionResult, error) {
		return e.handlers.RequestSession.Handle(ctx, e.md, commands.RequestSession{Spec: spec, Actor: actor, Mounts: mounts})
	}
	res, err := request(vfAlice, domain.VFolderMountRequest{Name: "data", Permission: domain.VFolderReadOnly},
		domain.VFolderMountRequest{Name: "shared", Path: "proj"})
	if err != nil {
		t.Fatal(err)
	}
	req := decode(t, e.read(t, domain.SessionStream(res.SessionID).String()))[0].Event.(domain.SessionRequested)
	want := []domain.VFolderMount{
		{FolderID: data.String(), Name: "data", Host: "local", Path: "/home/work/data", Permission: domain.VFolderReadOnly},
		{Name: "shared", Host: "local", Path: "/home/work/proj", Permission: domain.VFolderReadOnly},
		{FolderID: dot.String(), Name: ".config", Host: "local", Path: "/home/work/.config", Permission: domain.VFolderRWDelete},
	}
	want[1].FolderID = req.Mounts[1].FolderID
	if !slices.Equal(req.Mounts, want) {
		t.Fatalf("mounts %+v\nwant %+v", req.Mounts, want)
	}

	for _, c := range []struct {
		name   string
		mounts []domain.VFolderMountRequest
		kind   domain.Kind
		field  string
	}{
		{"another user's folder", []domain.VFolderMountRequest{{Name: "bobs"}}, domain.KindInvalid, "mounts[0].name"},
		{"raising the permission", []domain.VFolderMountRequest{{Name: "data"}, {Name: "shared", Permission: domain.VFolderReadWrite}}, domain.KindForbidden, "mounts[1].permission"},
		{"overlapping paths", []domain.VFolderMountRequest{{Name: "data", Path: "x"}, {Name: "shared", Path: "x/y"}}, domain.KindInvalid, "mounts"},
		{"outside /home/work", []domain.VFolderMountRequest{{Name: "data", Path: "/etc"}}, domain.KindInvalid, "mounts[0].path"},
	} {
		_, err := request(vfAlice, c.mounts...)
		t.Run(c.name, func(t *testing.T) { wantKindField(t, err, c.kind, c.field) })
	}
	// A folder shared with bob mounts by name.
	e.dir[vfBob.UserID.String()+"/data"] = []uuid.UUID{data}
	_, err = request(vfBob, domain.VFolderMountRequest{Name: "data"})
	wantKindField(t, err, domain.KindInvalid, "mounts[0].name") // not a member: not visible, like an unknown name
	_ = bobs
	// Without an actor, nothing is mounted and naming a folder is refused.
	if _, err := request(commands.Principal{}); err != nil {
		t.Fatal(err)
	}
	_, err = request(commands.Principal{}, domain.VFolderMountRequest{Name: "data"})
	wantKindField(t, err, domain.KindInvalid, "mounts")
}

// appendRaw appends events at an expected revision, as a crashed command
// would have left them.
func appendRaw(t testing.TB, e *env, stream string, expected int64, evs ...domain.Event) {
	t.Helper()
	data, err := encodeEvents(evs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Append(ctx, stream, exact(expected), data...); err != nil {
		t.Fatal(err)
	}
}

// A create of an earlier version that stopped after claiming its name and
// was never retried left an orphan claim: past the grace period another
// create takes the name over, and the orphan can then never be created.
func TestCreateVFolderTakesOverAnOrphanClaim(t *testing.T) {
	t.Parallel()
	e := newVFEnvWith(t, commands.Options{EmailReservationGrace: 2 * time.Second})
	orphan := uuid.MustParse("0195a0c0-0000-7000-8000-00000000f00d")
	owner := commands.UserFolderOwner(vfAlice.UserID, "acme")
	appendRaw(t, e.env, owner.Stream().String(), -1, domain.VFolderNameClaimed{FolderID: orphan, Name: "data", At: t0})

	// The step clock moves a second per command, from the claim's time:
	// a create is past the 2s grace only on its third try.
	again := commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{Name: "data", Host: "local"}}
	for range 2 {
		_, err := e.handlers.CreateVFolder.Handle(ctx, e.md, again)
		wantKindField(t, err, domain.KindConflict, "")
	}
	res, err := e.handlers.CreateVFolder.Handle(ctx, e.md, again)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := e.index(t, owner).Lookup("data"); id != res.FolderID {
		t.Fatalf("the name is held by %s, want %s", id, res.FolderID)
	}
	if got := e.types(t, domain.VFolderStream(orphan).String()); !slices.Equal(got, []string{domain.TypeVFolderCreationAbandoned}) {
		t.Fatalf("orphan stream %v", got)
	}
	// The orphan's create, retried late, cannot come back.
	first := commands.CreateVFolder{Actor: vfAlice, Spec: domain.VFolderSpec{ID: orphan, Name: "data", Host: "local"}}
	_, err = e.handlers.CreateVFolder.Handle(ctx, e.md, first)
	wantKindField(t, err, domain.KindConflict, "")
}
