package vfolders_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/vfolders"
)

var ctx = context.Background()

// tenancy stands in for the tenancy read model: fixed viewers.
type tenancy map[uuid.UUID]domain.VFolderViewer

var hosts = domain.VFolderHosts{"local": domain.VFolderHostPermissions()}

func (tn tenancy) VFolderAccess(_ context.Context, p commands.Principal) (commands.VFolderAccess, error) {
	return commands.VFolderAccess{Viewer: tn[p.UserID], Hosts: hosts}, nil
}

func (tenancy) StoragePolicy(context.Context, domain.VFolderOwner) (domain.StoragePolicySpec, error) {
	return domain.StoragePolicySpec{}, nil
}

func (tn tenancy) UserByEmail(_ context.Context, email string) (commands.VFolderUser, error) {
	for id, v := range tn {
		if v.UserID == id.String() && email == v.UserID[len(v.UserID)-2:]+"@x.test" {
			return commands.VFolderUser{ID: id, Domain: v.Domain}, nil
		}
	}
	return commands.VFolderUser{}, domain.NotFound("test", "user")
}

func (tn tenancy) UserByID(_ context.Context, id uuid.UUID) (commands.VFolderUser, error) {
	if v, ok := tn[id]; ok {
		return commands.VFolderUser{ID: id, Domain: v.Domain}, nil
	}
	return commands.VFolderUser{}, domain.NotFound("test", "user")
}

// storage keeps nothing: the read model never sees bytes.
type storage struct{}

func (storage) HasHost(h string) bool                                       { return h == "local" }
func (storage) CreateFolder(context.Context, string, uuid.UUID) error       { return nil }
func (storage) DeleteFolder(context.Context, string, uuid.UUID) error       { return nil }
func (storage) UsedBytes(context.Context, string, uuid.UUID) (int64, error) { return 0, nil }
func (storage) CloneFolder(context.Context, string, uuid.UUID, string, uuid.UUID) error {
	return nil
}

func principal(n byte, role domain.Role, dom string) commands.Principal {
	return commands.Principal{UserID: uuid.UUID{0x01, 0x95, 15: n}, Role: role, Domain: dom}
}

var (
	alice = principal(0xa1, domain.RoleUser, "acme")
	bob   = principal(0xb0, domain.RoleUser, "acme")
	carol = principal(0xc0, domain.RoleUser, "acme")
	admin = principal(0xad, domain.RoleAdmin, "acme")
	mon   = principal(0x30, domain.RoleMonitor, "acme")
	eve   = principal(0xe0, domain.RoleUser, "evil")
	root  = principal(0x10, domain.RoleSuperadmin, "default")
)

func viewers() tenancy {
	v := func(p commands.Principal, projects ...string) domain.VFolderViewer {
		return domain.VFolderViewer{UserID: p.UserID.String(), Domain: p.Domain, Projects: projects,
			Superadmin: p.Role == domain.RoleSuperadmin, DomainAdmin: p.Role == domain.RoleAdmin, ReadOnly: p.Role == domain.RoleMonitor}
	}
	return tenancy{
		alice.UserID: v(alice, "acme/ml"), bob.UserID: v(bob, "acme/ml"), carol.UserID: v(carol),
		admin.UserID: v(admin), mon.UserID: v(mon), eve.UserID: v(eve, "evil/ml"), root.UserID: v(root),
	}
}

type world struct {
	h                                  *commands.Handlers
	aliceData, aliceTmp, project, gone uuid.UUID
	evesData                           uuid.UUID
	invitation                         uuid.UUID
	last                               uint64
}

// build sends the commands of a small world of folders; restart (if set)
// is called half-way.
func build(t testing.TB, b *projectiontest.Backend, restart func()) *world {
	t.Helper()
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{
		VFolders: commands.VFolderPorts{Tenancy: viewers(), Storage: storage{}}})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h}
	md := projectiontest.MD
	step := func(r commands.VFolderResult, err error) uuid.UUID {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		w.last = max(w.last, r.Position)
		return r.FolderID
	}
	create := func(p commands.Principal, spec domain.VFolderSpec) uuid.UUID {
		t.Helper()
		spec.Host = "local"
		return step(h.CreateVFolder.Handle(ctx, md, commands.CreateVFolder{Actor: p, Spec: spec}))
	}
	w.aliceData = create(alice, domain.VFolderSpec{Name: "data", Cloneable: true})
	w.aliceTmp = create(alice, domain.VFolderSpec{Name: "tmp"})
	w.project = create(admin, domain.VFolderSpec{Name: "shared", Owner: commands.ProjectFolderOwner("acme", "ml"), Permission: domain.VFolderReadOnly})
	w.gone = create(alice, domain.VFolderSpec{Name: "gone"})
	w.evesData = create(eve, domain.VFolderSpec{Name: "data"})
	inv, err := h.InviteToVFolder.Handle(ctx, md, commands.InviteToVFolder{Actor: alice, FolderID: w.aliceData, Email: "b0@x.test", Permission: domain.VFolderReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	step(h.AcceptVFolderInvitation.Handle(ctx, md, commands.AcceptVFolderInvitation{Actor: bob, FolderID: w.aliceData, InvitationID: inv.InvitationID}))
	inv2, err := h.InviteToVFolder.Handle(ctx, md, commands.InviteToVFolder{Actor: alice, FolderID: w.aliceTmp, Email: "c0@x.test", Permission: domain.VFolderReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	w.invitation, w.last = inv2.InvitationID, max(w.last, inv2.Position)
	if restart != nil {
		restart()
	}
	step(h.ShareVFolder.Handle(ctx, md, commands.ShareVFolder{Actor: admin, FolderID: w.project, UserID: bob.UserID.String(), Permission: domain.VFolderRWDelete}))
	step(h.ShareVFolder.Handle(ctx, md, commands.ShareVFolder{Actor: admin, FolderID: w.project, UserID: carol.UserID.String(), Permission: domain.VFolderReadWrite}))
	step(h.UnshareVFolder.Handle(ctx, md, commands.UnshareVFolder{Actor: admin, FolderID: w.project, UserID: carol.UserID.String()}))
	step(h.RenameVFolder.Handle(ctx, md, commands.RenameVFolder{Actor: alice, FolderID: w.aliceTmp, Name: "scratch"}))
	step(h.TrashVFolder.Handle(ctx, md, commands.TrashVFolder{Actor: alice, FolderID: w.aliceTmp}))
	for _, f := range []func() (commands.VFolderResult, error){
		func() (commands.VFolderResult, error) {
			return h.TrashVFolder.Handle(ctx, md, commands.TrashVFolder{Actor: alice, FolderID: w.gone})
		},
		func() (commands.VFolderResult, error) {
			return h.DeleteVFolderForever.Handle(ctx, md, commands.DeleteVFolderForever{Actor: alice, FolderID: w.gone})
		},
		func() (commands.VFolderResult, error) {
			return h.FinishVFolderDelete.Handle(ctx, md, commands.FinishVFolderDelete{FolderID: w.gone, OK: true})
		},
		func() (commands.VFolderResult, error) {
			return h.PurgeVFolder.Handle(ctx, md, commands.PurgeVFolder{Actor: alice, FolderID: w.gone})
		},
	} {
		step(f())
	}
	step(h.CloneVFolder.Handle(ctx, md, commands.CloneVFolder{Actor: bob, SourceID: w.aliceData, Spec: domain.VFolderSpec{Name: "copy"}}))
	return w
}

// fold returns the folder as the write side sees it.
func fold(t testing.TB, store eventstore.Store, id uuid.UUID) *domain.VFolder {
	t.Helper()
	recs, err := store.ReadStream(ctx, domain.VFolderStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatal(err)
	}
	evs, err := commands.DecodeStream(recs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := domain.RehydrateVFolder(evs)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Visible agrees with the aggregate's EffectivePermission, for every
// viewer and every folder.
func TestVisibleMatchesTheAggregate(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := vfolders.New(b.DB)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		w := build(t, b, nil)
		r.WaitFor(t, w.last)

		all, err := rm.Visible(ctx, viewers()[root.UserID], vfolders.Filter{Relations: []vfolders.Relation{vfolders.RelationDomain}})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 5 { // data, scratch, shared, evil's data, the copy (gone is purged)
			t.Fatalf("%d folders: %+v", len(all), all)
		}
		every := []vfolders.Relation{vfolders.RelationOwn, vfolders.RelationShared, vfolders.RelationProject, vfolders.RelationDomain}
		for id, v := range viewers() {
			got, err := rm.Visible(ctx, v, vfolders.Filter{Relations: every})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[uuid.UUID]domain.VFolderPermission{}
			for _, g := range got {
				seen[g.ID] = g.Effective
			}
			for _, f := range all {
				want, ok := fold(t, b.Store, f.ID).EffectivePermission(v)
				if gotPerm, in := seen[f.ID]; in != ok || gotPerm != want {
					t.Errorf("viewer %s, folder %s: read model %q (%v), aggregate %q (%v)", id, f.Name, gotPerm, in, want, ok)
				}
			}
		}

		// Relations.
		bobs, err := rm.Visible(ctx, viewers()[bob.UserID], vfolders.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		rel := map[string]vfolders.Relation{}
		for _, f := range bobs {
			rel[f.Name] = f.Relation
		}
		if want := map[string]vfolders.Relation{"copy": vfolders.RelationOwn, "data": vfolders.RelationShared, "shared": vfolders.RelationProject}; !mapsEqual(rel, want) {
			t.Errorf("bob sees %v, want %v", rel, want)
		}
		trash, err := rm.Visible(ctx, viewers()[alice.UserID], vfolders.Filter{Statuses: []domain.VFolderStatus{domain.VFolderDeletePending}})
		if err != nil || len(trash) != 1 || trash[0].Name != "scratch" {
			t.Errorf("alice's trash: %+v, %v", trash, err)
		}

		// Invitations and shared lookups.
		to, err := rm.InvitationsTo(ctx, carol.UserID.String(), domain.InvitationPending)
		if err != nil || len(to) != 1 || to[0].ID != w.invitation || to[0].FolderName != "scratch" {
			t.Errorf("carol's invitations %+v, %v", to, err)
		}
		from, err := rm.InvitationsFrom(ctx, alice.UserID.String(), "")
		if err != nil || len(from) != 2 {
			t.Errorf("alice's invitations %+v, %v", from, err)
		}
		ids, err := rm.SharedWithNamed(ctx, bob.UserID.String(), "data")
		if err != nil || !slices.Equal(ids, []uuid.UUID{w.aliceData}) {
			t.Errorf("shared with bob named data: %v, %v", ids, err)
		}
		users, err := rm.Users(ctx, w.project)
		if err != nil || len(users) != 1 || users[0].Permission != domain.VFolderRWDelete {
			t.Errorf("project folder users %+v, %v", users, err)
		}
		// The stored checkpoint moves with the batches the projection
		// applies; events it does not handle move only the in-memory
		// position (WaitFor). So the answer reflects at least the last
		// folder event, not necessarily w.last.
		pending, pos, err := rm.PendingJobs(ctx)
		if lastFolder := lastHandled(t, b.Store, rm.EventTypes()); err != nil || len(pending) != 1 || pos < lastFolder {
			t.Errorf("pending jobs %v at %d (the last folder event at %d), %v", pending, pos, lastFolder, err)
		}
		if _, err := rm.Get(ctx, w.gone); domain.KindOf(err) != domain.KindNotFound {
			t.Errorf("the purged folder: %v", err)
		}
	})
}

// The live projector, restarted half-way, and a rebuild produce the same
// rows.
func TestRebuildEqualsLive(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := vfolders.New(b.DB)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 2})
		w := build(t, b, func() {
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			r = projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 3})
		})
		r.WaitFor(t, w.last)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		live := dump(t, b.DB)
		p, err := projections.NewProjector(b.DB, b.Store, vfolders.New(b.DB), projections.Options{BatchSize: 500, Logger: projectiontest.Discard})
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

func dump(t testing.TB, db *projections.DB) []string {
	var out []string
	out = append(out, projectiontest.Dump(t, db, "vfolders", 17, "id")...)
	out = append(out, projectiontest.Dump(t, db, "vfolder_users", 5, "folder_id, user_id, kind")...)
	out = append(out, projectiontest.Dump(t, db, "vfolder_invitations", 10, "id")...)
	return out
}

// Page walks the visible folders by name, a few at a time, the pages
// together being exactly Visible's answer; several statuses filter at
// once; a bad limit or cursor is refused naming it.
func TestPage(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := vfolders.New(b.DB)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		w := build(t, b, nil)
		r.WaitFor(t, w.last)
		v := viewers()[root.UserID]
		domainWide := []vfolders.Relation{vfolders.RelationDomain}

		all, err := rm.Visible(ctx, v, vfolders.Filter{Relations: domainWide})
		if err != nil || len(all) != 5 {
			t.Fatalf("%d folders, %v", len(all), err)
		}
		var walked []uuid.UUID
		var sizes []int
		cursor := ""
		for {
			page, err := rm.Page(ctx, v, vfolders.Filter{Relations: domainWide, Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page.Folders))
			for _, f := range page.Folders {
				walked = append(walked, f.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		var want []uuid.UUID
		for _, f := range all {
			want = append(want, f.ID)
		}
		if !slices.Equal(walked, want) || !slices.Equal(sizes, []int{2, 2, 1}) {
			t.Errorf("pages of %v walked %v, want %v", sizes, walked, want)
		}
		// Pages over several relations (merged branches, a folder seen
		// through two of them once) walk the same folders as one read.
		every := []vfolders.Relation{vfolders.RelationOwn, vfolders.RelationShared, vfolders.RelationProject, vfolders.RelationDomain}
		for _, who := range []commands.Principal{admin, alice, bob, root} {
			v := viewers()[who.UserID]
			whole, err := rm.Visible(ctx, v, vfolders.Filter{Relations: every})
			if err != nil || len(whole) == 0 {
				t.Fatalf("%s: %d folders, %v", who.UserID, len(whole), err)
			}
			var paged []vfolders.Visible
			for cursor := ""; ; {
				page, err := rm.Page(ctx, v, vfolders.Filter{Relations: every, Limit: 1, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page.Folders...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if !slices.EqualFunc(paged, whole, func(a, b vfolders.Visible) bool {
				return a.ID == b.ID && a.Relation == b.Relation && a.Effective == b.Effective
			}) {
				t.Errorf("%s: paged %v, want %v", who.UserID, paged, whole)
			}
		}
		// A limit that holds everything has no next page.
		page, err := rm.Page(ctx, v, vfolders.Filter{Relations: domainWide, Limit: 5})
		if err != nil || len(page.Folders) != 5 || page.NextCursor != "" {
			t.Errorf("limit 5: %d folders, next %q, %v", len(page.Folders), page.NextCursor, err)
		}

		live, err := rm.Visible(ctx, v, vfolders.Filter{Relations: domainWide, Statuses: []domain.VFolderStatus{domain.VFolderReady, domain.VFolderDeletePending}})
		n := 0
		for _, f := range all {
			if f.Status == domain.VFolderReady || f.Status == domain.VFolderDeletePending {
				n++
			}
		}
		if err != nil || len(live) != n || n < 2 {
			t.Errorf("ready or in the trash: %d, want %d, %v", len(live), n, err)
		}
		trash, err := rm.Visible(ctx, v, vfolders.Filter{Relations: domainWide, Statuses: []domain.VFolderStatus{domain.VFolderDeletePending, domain.VFolderDeleteError}})
		if err != nil || len(trash) != 1 || trash[0].Name != "scratch" {
			t.Errorf("the trash: %+v, %v", trash, err)
		}

		for _, f := range []vfolders.Filter{{Limit: -1}, {Limit: vfolders.MaxListLimit + 1}} {
			if _, err := rm.Page(ctx, v, f); fieldOf(err) != "limit" {
				t.Errorf("limit %d: %v", f.Limit, err)
			}
		}
		for _, c := range []string{"x", "!!", "YWJj"} {
			if _, err := rm.Page(ctx, v, vfolders.Filter{Limit: 1, Cursor: c}); fieldOf(err) != "cursor" {
				t.Errorf("cursor %q: %v", c, err)
			}
		}
	})
}

// fieldOf is the field an invalid-input error names ("" for any other).
func fieldOf(err error) string {
	var e *domain.Error
	if !errors.As(err, &e) || e.Kind != domain.KindInvalid {
		return ""
	}
	return e.Field
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// lastHandled returns the position of the last event in the log whose type
// is one of types.
func lastHandled(t testing.TB, store eventstore.Store, types []string) uint64 {
	t.Helper()
	var last uint64
	for after := uint64(0); ; {
		evs, err := store.ReadAll(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return last
		}
		for _, ev := range evs {
			if slices.Contains(types, ev.Type) {
				last = ev.Position
			}
		}
		after = evs[len(evs)-1].Position
	}
}
