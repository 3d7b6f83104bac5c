package commandapi_test

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// The virtual folder rows of the authorization matrix. The folders of a
// row are fresh for every request (most requests change them): on the own
// side they belong to the caller's tenant "default", on the other side to
// "other". The rules (domain/vfolder_access.go):
// superadmins and the domain's admins manage every folder of their reach,
// the owner of a user folder manages it, a project's members use its
// folders with the folder's permission, a monitor of the domain reads
// them and writes nothing, and a folder the caller may not see answers
// 404, whatever the request.

// testFile is the file every matrix folder holds.
const testFile = "f.txt"

// matrixActors are the test users the folders' fixtures act as, with
// their roles and domains (seeded in helpers_test.go).
var matrixActors = map[string]struct {
	role   domain.Role
	domain string
}{
	adminToken: {domain.RoleSuperadmin, "default"},
	aliceToken: {domain.RoleUser, "default"},
	bobToken:   {domain.RoleUser, "default"},
	"carol":    {domain.RoleUser, "other"},
	"oadmin":   {domain.RoleAdmin, "other"},
}

// actor is a test user as the commands' principal.
func (m *matrix) actor(name string) commands.Principal {
	a, ok := matrixActors[name]
	if !ok {
		m.t.Fatalf("no matrix actor %q", name)
	}
	return commands.Principal{UserID: m.e.users[name].ID, Role: a.role, Domain: a.domain}
}

// vfolderDone fails the test on err and waits until the read models show
// position.
func (m *matrix) vfolderDone(res commands.VFolderResult, err error) uuid.UUID {
	m.t.Helper()
	if err != nil {
		m.t.Fatal(err)
	}
	m.e.wait(m.t, res.Position)
	return res.FolderID
}

// folder creates a fresh ready folder by creator (owned by owner; zero:
// the creator) holding testFile, and returns its id.
func (m *matrix) folder(creator string, owner domain.VFolderOwner, cloneable bool) uuid.UUID {
	m.t.Helper()
	res, err := m.e.handlers.CreateVFolder.Handle(context.Background(), testMD, commands.CreateVFolder{Actor: m.actor(creator),
		Spec: domain.VFolderSpec{Name: m.unique("vf"), Host: "local", Owner: owner, Cloneable: cloneable}})
	id := m.vfolderDone(res, err)
	if _, err := m.e.vfs.Upload(context.Background(), vfstorage.Ref{Host: "local", ID: id}, testFile,
		strings.NewReader("hello"), vfstorage.UploadOptions{}); err != nil {
		m.t.Fatal(err)
	}
	return id
}

// userFolder is a fresh cloneable folder of alice (own) or carol (other).
func (m *matrix) userFolder(own bool) uuid.UUID {
	return m.folder(pick(own, aliceToken, "carol"), domain.VFolderOwner{}, true)
}

// bobsFolder is a fresh folder of bob (own: a user of the caller's tenant
// that shares nothing with the user role's caller) or carol (other).
func (m *matrix) bobsFolder(own bool) uuid.UUID {
	return m.folder(pick(own, bobToken, "carol"), domain.VFolderOwner{}, true)
}

// projectFolder is a fresh folder (rw, not cloneable) of project
// default/default, whose member the user role's caller is (own), or of
// other/ml (other), made by the superadmin.
func (m *matrix) projectFolder(own bool) uuid.UUID {
	owner := pick(own, commands.ProjectFolderOwner("default", "default"), commands.ProjectFolderOwner("other", "ml"))
	return m.folder(adminToken, owner, false)
}

// trashed moves a folder to the trash (as the superadmin).
func (m *matrix) trashed(id uuid.UUID) uuid.UUID {
	m.t.Helper()
	return m.vfolderDone(m.e.handlers.TrashVFolder.Handle(context.Background(), testMD,
		commands.TrashVFolder{Actor: m.actor(adminToken), FolderID: id}))
}

// deleted deletes a trashed folder's data and waits until it is
// delete-complete (the vfolder jobs remove it in the background).
func (m *matrix) deleted(id uuid.UUID) uuid.UUID {
	m.t.Helper()
	res, err := m.e.handlers.DeleteVFolderForever.Handle(context.Background(), testMD,
		commands.DeleteVFolderForever{Actor: m.actor(adminToken), FolderID: id})
	if err != nil {
		m.t.Fatal(err)
	}
	m.e.awaitFolder(m.t, adminToken, id.String(), res.Position, func(v vfolderAnswer) bool {
		return v.Status == string(domain.VFolderDeleteComplete)
	})
	return id
}

// invite invites invitee to folder id as inviter (read-only) and returns
// the invitation's id.
func (m *matrix) invite(id uuid.UUID, inviter, invitee string) uuid.UUID {
	m.t.Helper()
	res, err := m.e.handlers.InviteToVFolder.Handle(context.Background(), testMD, commands.InviteToVFolder{Actor: m.actor(inviter),
		FolderID: id, Email: m.e.users[invitee].Email, Permission: domain.VFolderReadOnly})
	if err != nil {
		m.t.Fatal(err)
	}
	m.e.wait(m.t, res.Position)
	return res.InvitationID
}

// shared is folder id shared with member: invited by the folder's owner
// and accepted.
func (m *matrix) shared(id uuid.UUID, owner, member string) uuid.UUID {
	m.t.Helper()
	inv := m.invite(id, owner, member)
	return m.vfolderDone(m.e.handlers.AcceptVFolderInvitation.Handle(context.Background(), testMD,
		commands.AcceptVFolderInvitation{Actor: m.actor(member), FolderID: id, InvitationID: inv}))
}

// invitation is a fresh pending invitation. inviterAlice: alice's folder
// invites bob (own), else bob's folder invites alice (own); the other side
// is always carol's folder inviting oadmin.
func (m *matrix) invitation(own, inviterAlice bool) string {
	switch {
	case !own:
		return m.invite(m.userFolder(false), "carol", "oadmin").String()
	case inviterAlice:
		return m.invite(m.userFolder(true), aliceToken, bobToken).String()
	}
	return m.invite(m.bobsFolder(true), bobToken, aliceToken).String()
}

// overridden is a fresh project folder with a per-user permission for
// bob (own) or carol (other).
func (m *matrix) overridden(own bool) uuid.UUID {
	m.t.Helper()
	id := m.projectFolder(own)
	return m.vfolderDone(m.e.handlers.ShareVFolder.Handle(context.Background(), testMD, commands.ShareVFolder{Actor: m.actor(adminToken),
		FolderID: id, UserID: pick(own, m.bob, m.carl).ID.String(), Permission: domain.VFolderReadOnly}))
}

func (m *matrix) vfolderRows() []matrixRow {
	const (
		ok      = http.StatusOK
		created = http.StatusCreated
		acc     = http.StatusAccepted
		bad     = http.StatusBadRequest
		no      = http.StatusForbidden
		nf      = http.StatusNotFound
		conf    = http.StatusConflict
	)
	// Shapes of the wants. sees: a folder every role of the tenant sees
	// (the user role's caller owns it or is a member of its project).
	sees := map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {ok, nf}, "monitor": {ok, nf}}
	// manages: the user role's caller owns the folder; monitors read only.
	manages := func(s int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": {s, nf}, "user": {s, nf}, "monitor": {no, nf}}
	}
	// administers: only admins manage (a project folder); its members and
	// monitors see it and are refused.
	administers := func(s int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": {s, nf}, "user": {no, nf}, "monitor": {no, nf}}
	}
	// strangers: another user's folder the user role's caller has no
	// relation to (404 for it); admins manage it, monitors read it.
	strangers := func(s, monitor int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": {s, nf}, "user": {nf, nf}, "monitor": {monitor, nf}}
	}
	fixed := func(p string) func(bool) string { return func(bool) string { return p } }
	text := func(s string) func(bool) string { return func(bool) string { return s } }
	named := func(bool) string { return `{"name":"` + m.unique("n") + `"}` }
	at := func(folder func(bool) uuid.UUID, suffix string) func(bool) string {
		return func(own bool) string { return "/v1/vfolders/" + folder(own).String() + suffix }
	}
	trashedUser := func(own bool) uuid.UUID { return m.trashed(m.userFolder(own)) }
	deletedUser := func(own bool) uuid.UUID { return m.deleted(m.trashed(m.userFolder(own))) }
	email := func(name string) string { return m.e.users[name].Email }
	// The member a folder of each side is shared with: bob (own) or
	// oadmin (other).
	sharedUser := func(own bool) uuid.UUID {
		id := m.userFolder(own)
		return m.shared(id, pick(own, aliceToken, "carol"), pick(own, bobToken, "oadmin"))
	}
	memberID := func(own bool) string { return m.e.users[pick(own, bobToken, "oadmin")].ID.String() }
	// bob's folder shared with alice (own), carol's with oadmin (other).
	sharedWithAlice := func(own bool) uuid.UUID {
		if !own {
			return sharedUser(false)
		}
		return m.shared(m.bobsFolder(true), bobToken, aliceToken)
	}
	invitations := func(inviterAlice bool, action string) func(bool) string {
		return func(own bool) string {
			return "/v1/vfolder-invitations/" + m.invitation(own, inviterAlice) + "/" + action
		}
	}

	return []matrixRow{
		// The caller's own quota scope, or a project of its domain: "ml" is
		// not one (the route names projects of the caller's domain only).
		{method: "GET", route: "/v1/vfolders/quota-scope", path: func(own bool) string {
			return "/v1/vfolders/quota-scope?project=" + pick(own, "default", "ml")
		}, want: withAuditors(map[string]want{"superadmin": {ok, nf}, "admin": {ok, nf}, "user": {ok, nf}, "monitor": {ok, nf}}, same(nf))}, // auditors belong to no project
		{method: "GET", route: "/v1/vfolders/quota-scope", path: fixed("/v1/vfolders/quota-scope"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok)}},

		// A user folder of the caller; a project folder in the caller's
		// domain (the "other" variant names "ml", not a project of it:
		// 400 for admins, 403 for the rest, who may not make project
		// folders at all).
		{method: "POST", route: "/v1/vfolders", path: fixed("/v1/vfolders"), body: named,
			want: map[string]want{"superadmin": same(created), "admin": same(created), "user": same(created), "monitor": same(no)}},
		{method: "POST", route: "/v1/vfolders", path: fixed("/v1/vfolders"), body: func(own bool) string {
			return `{"name":"` + m.unique("n") + `","project":"` + pick(own, "default", "ml") + `"}`
		}, want: map[string]want{"superadmin": {created, bad}, "admin": {created, bad}, "user": same(no), "monitor": same(no)}},
		{method: "GET", route: "/v1/vfolders", path: fixed("/v1/vfolders"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok)}},
		{method: "GET", route: "/v1/vfolders", path: fixed("/v1/vfolders?relation=domain"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok)}},

		// Auditors see no one's folders but their own.
		{method: "GET", route: "/v1/vfolders/:id", path: at(m.userFolder, ""), want: withAuditors(sees, same(nf))},
		{method: "GET", route: "/v1/vfolders/:id", path: at(m.projectFolder, ""), want: withAuditors(sees, same(nf))},
		{method: "GET", route: "/v1/vfolders/:id", path: at(m.bobsFolder, ""), want: strangers(ok, ok)},
		{method: "POST", route: "/v1/vfolders/:id/rename", path: at(m.userFolder, "/rename"), body: named, want: manages(ok)},
		{method: "POST", route: "/v1/vfolders/:id/rename", path: at(m.projectFolder, "/rename"), body: named, want: administers(ok)},
		{method: "POST", route: "/v1/vfolders/:id/rename", path: at(m.bobsFolder, "/rename"), body: named, want: strangers(ok, no)},
		{method: "DELETE", route: "/v1/vfolders/:id", path: at(m.userFolder, ""), want: manages(ok)},
		{method: "DELETE", route: "/v1/vfolders/:id", path: at(m.projectFolder, ""), want: administers(ok)},
		{method: "DELETE", route: "/v1/vfolders/:id", path: at(m.bobsFolder, ""), want: strangers(ok, no)},
		{method: "POST", route: "/v1/vfolders/:id/restore", path: at(trashedUser, "/restore"), want: manages(ok)},
		{method: "POST", route: "/v1/vfolders/:id/delete-forever", path: at(trashedUser, "/delete-forever"), want: manages(acc)},
		{method: "POST", route: "/v1/vfolders/:id/purge", path: at(deletedUser, "/purge"), want: manages(ok)},
		// Clones are the caller's own folders: a cloneable folder for
		// whoever sees it, a folder that is not cloneable (the project's)
		// for its managers only; monitors make no folders.
		{method: "POST", route: "/v1/vfolders/:id/clone", path: at(m.userFolder, "/clone"), body: named, want: manages(acc)},
		{method: "POST", route: "/v1/vfolders/:id/clone", path: at(m.projectFolder, "/clone"), body: named, want: administers(acc)},

		// Invitations to a user folder, of users of the folder's domain.
		// An unknown address, or a user of another domain, is refused
		// (400) only to whoever may invite to the folder: the others learn
		// nothing of the address (403, or 404 for a folder they may not
		// see).
		{method: "POST", route: "/v1/vfolders/:id/invitations", path: at(m.userFolder, "/invitations"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, bobToken, "oadmin")) + `","permission":"ro"}`
		}, want: manages(created)},
		{method: "POST", route: "/v1/vfolders/:id/invitations", path: at(m.userFolder, "/invitations"),
			body: text(`{"email":"nobody@nowhere.test","permission":"ro"}`), want: manages(bad)},
		{method: "POST", route: "/v1/vfolders/:id/invitations", path: at(m.userFolder, "/invitations"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, "carol", bobToken)) + `","permission":"ro"}`
		}, want: manages(bad)},
		{method: "POST", route: "/v1/vfolders/:id/invitations", path: at(m.projectFolder, "/invitations"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, bobToken, "oadmin")) + `","permission":"ro"}`
		}, want: administers(conf)},
		{method: "GET", route: "/v1/vfolder-invitations", path: fixed("/v1/vfolder-invitations"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok)}},
		{method: "GET", route: "/v1/vfolder-invitations", path: fixed("/v1/vfolder-invitations?direction=sent&state=pending"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok)}},
		// Only the invitee answers an invitation: bob's folder invites the
		// user role's caller. Its inviter and the folder's managers see it
		// and are refused; anyone else sees nothing.
		{method: "POST", route: "/v1/vfolder-invitations/:id/accept", path: invitations(false, "accept"),
			want: map[string]want{"superadmin": same(no), "admin": {no, nf}, "user": {ok, nf}, "monitor": same(nf)}},
		{method: "POST", route: "/v1/vfolder-invitations/:id/reject", path: invitations(false, "reject"),
			want: map[string]want{"superadmin": same(no), "admin": {no, nf}, "user": {ok, nf}, "monitor": same(nf)}},
		// The inviter and the folder's managers withdraw an invitation:
		// the user role's caller invites (first) or is the invitee, who
		// may not (second).
		{method: "POST", route: "/v1/vfolder-invitations/:id/cancel", path: invitations(true, "cancel"),
			want: map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {ok, nf}, "monitor": same(nf)}},
		{method: "POST", route: "/v1/vfolder-invitations/:id/cancel", path: invitations(false, "cancel"),
			want: map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {no, nf}, "monitor": same(nf)}},
		// A member leaves; the owner and the managers remove a member.
		{method: "POST", route: "/v1/vfolders/:id/leave", path: at(sharedUser, "/leave"),
			body: func(own bool) string { return `{"user_id":"` + memberID(own) + `"}` }, want: manages(ok)},
		{method: "POST", route: "/v1/vfolders/:id/leave", path: at(sharedWithAlice, "/leave"),
			want: map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {ok, nf}, "monitor": {no, nf}}},

		// Per-user permissions of project folders: admins only. A user
		// named by an address must be of the folder's domain, and only
		// those who may share learn whether it is (400).
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"), body: func(own bool) string {
			return `{"user_id":"` + pick(own, m.bob, m.carl).ID.String() + `","permission":"ro"}`
		}, want: administers(ok)},
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, bobToken, "carol")) + `","permission":"rw"}`
		}, want: administers(ok)},
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"),
			body: text(`{"email":"nobody@nowhere.test","permission":"ro"}`), want: administers(bad)},
		// The same for a user id: unknown, or of another domain.
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"),
			body: text(`{"user_id":"0195a0c0-0000-7000-8000-00000000dead","permission":"ro"}`), want: administers(bad)},
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"), body: func(own bool) string {
			return `{"user_id":"` + pick(own, m.carl, m.bob).ID.String() + `","permission":"ro"}`
		}, want: administers(bad)},
		{method: "POST", route: "/v1/vfolders/:id/share", path: at(m.projectFolder, "/share"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, "carol", bobToken)) + `","permission":"ro"}`
		}, want: administers(bad)},
		{method: "POST", route: "/v1/vfolders/:id/unshare", path: at(m.overridden, "/unshare"), body: func(own bool) string {
			return `{"user_id":"` + pick(own, m.bob, m.carl).ID.String() + `"}`
		}, want: administers(ok)},
		{method: "POST", route: "/v1/vfolders/:id/unshare", path: at(m.overridden, "/unshare"), body: func(own bool) string {
			return `{"email":"` + email(pick(own, bobToken, "carol")) + `"}`
		}, want: administers(ok)},

		// Files: reading needs the folder's ro, writing rw, deleting wd
		// (the project folder is rw: its members may write, not delete).
		{method: "GET", route: "/v1/vfolders/:id/files", path: at(m.userFolder, "/files"), want: withAuditors(sees, same(nf))},
		{method: "GET", route: "/v1/vfolders/:id/files", path: at(m.projectFolder, "/files"), want: withAuditors(sees, same(nf))},
		{method: "GET", route: "/v1/vfolders/:id/files", path: at(m.bobsFolder, "/files"), want: strangers(ok, ok)},
		{method: "GET", route: "/v1/vfolders/:id/files/content", path: at(m.userFolder, "/files/content?path="+testFile), want: withAuditors(sees, same(nf))},
		{method: "GET", route: "/v1/vfolders/:id/files/content", path: at(m.bobsFolder, "/files/content?path="+testFile),
			want: strangers(ok, ok)},
		{method: "PUT", route: "/v1/vfolders/:id/files/content", path: at(m.userFolder, "/files/content?path=new"),
			body: text("data"), want: manages(created)},
		{method: "PUT", route: "/v1/vfolders/:id/files/content", path: at(m.projectFolder, "/files/content?path=new"),
			body: text("data"), want: manages(created)},
		{method: "PUT", route: "/v1/vfolders/:id/files/content", path: at(m.bobsFolder, "/files/content?path=new"),
			body: text("data"), want: strangers(created, no)},
		{method: "POST", route: "/v1/vfolders/:id/files/mkdir", path: at(m.userFolder, "/files/mkdir"),
			body: text(`{"path":"d"}`), want: manages(created)},
		{method: "POST", route: "/v1/vfolders/:id/files/move", path: at(m.userFolder, "/files/move"),
			body: text(`{"from":"` + testFile + `","to":"g.txt"}`), want: manages(ok)},
		{method: "DELETE", route: "/v1/vfolders/:id/files", path: at(m.userFolder, "/files?path="+testFile), want: manages(ok)},
		{method: "DELETE", route: "/v1/vfolders/:id/files", path: at(m.projectFolder, "/files?path="+testFile), want: administers(ok)},

		// Resumable uploads (tus) are folder writes. An upload is its
		// creator's (the user role's caller on the own side, carol on the
		// other): anyone else, admins included, finds no such upload.
		{method: "OPTIONS", route: "/v1/vfolders/:id/uploads", path: at(m.userFolder, "/uploads"),
			want: withAuditors(manages(http.StatusNoContent), same(nf))},
		{method: "POST", route: "/v1/vfolders/:id/uploads", path: at(m.userFolder, "/uploads"), header: tusCreateHeader, want: manages(created)},
		{method: "POST", route: "/v1/vfolders/:id/uploads", path: at(m.bobsFolder, "/uploads"), header: tusCreateHeader, want: strangers(created, no)},
		{method: "PATCH", route: "/v1/vfolders/:id/uploads/:upload", path: m.upload, body: text("data"),
			header: tusChunkHeader, want: uploader(http.StatusNoContent)},
		{method: "DELETE", route: "/v1/vfolders/:id/uploads/:upload", path: m.upload,
			header: func(bool) map[string]string { return tusHeaders() }, want: uploader(http.StatusNoContent)},
	}
}

// uploader: a resumable upload of the user role's caller; monitors write
// nothing.
func uploader(s int) map[string]want {
	nf := http.StatusNotFound
	return map[string]want{"superadmin": same(nf), "admin": same(nf), "user": {s, nf}, "monitor": {http.StatusForbidden, nf}}
}

func tusCreateHeader(bool) map[string]string {
	return tusHeaders("Upload-Length", "4", "Upload-Metadata", tusMeta("path", "up"))
}

func tusChunkHeader(bool) map[string]string {
	return tusHeaders("Upload-Offset", "0", "Content-Type", "application/offset+octet-stream")
}

// upload is a fresh 4-byte resumable upload in a fresh folder of alice
// (own) or carol (other), created by the folder's owner.
func (m *matrix) upload(own bool) string {
	m.t.Helper()
	id := m.userFolder(own)
	st, err := m.e.vfs.CreateUpload(context.Background(), vfstorage.Ref{Host: "local", ID: id},
		vfstorage.UploadSpec{Path: "up", Length: 4, Owner: m.e.users[pick(own, aliceToken, "carol")].ID.String()})
	if err != nil {
		m.t.Fatal(err)
	}
	return "/v1/vfolders/" + id.String() + "/uploads/" + st.ID
}
