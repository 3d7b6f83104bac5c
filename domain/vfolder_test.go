package domain

import (
	"testing"

	"github.com/google/uuid"
)

var (
	folderID = uuid.MustParse("0195a0c0-0000-7000-8000-00000000f001")
	cloneID  = uuid.MustParse("0195a0c0-0000-7000-8000-00000000f002")
	invite1  = uuid.MustParse("0195a0c0-0000-7000-8000-00000000e001")

	userOwner    = VFolderOwner{Kind: VFolderOwnedByUser, ID: "alice", Domain: "d1"}
	projectOwner = VFolderOwner{Kind: VFolderOwnedByProject, ID: "p1", Domain: "d1"}

	alice      = VFolderViewer{UserID: "alice", Domain: "d1", Projects: []string{"p1"}}
	bob        = VFolderViewer{UserID: "bob", Domain: "d1", Projects: []string{"p1"}}
	carol      = VFolderViewer{UserID: "carol", Domain: "d1"}
	mallory    = VFolderViewer{UserID: "mallory", Domain: "d2", Projects: []string{"p9"}}
	admin1     = VFolderViewer{UserID: "adm", Domain: "d1", DomainAdmin: true}
	admin2     = VFolderViewer{UserID: "adm2", Domain: "d2", DomainAdmin: true}
	superadmin = VFolderViewer{UserID: "root", Domain: "default", Superadmin: true}
	monitor1   = VFolderViewer{UserID: "mon", Domain: "d1", ReadOnly: true}

	allHostPerms = VFolderHosts{"local": VFolderHostPermissions()}
)

func folderCreated(owner VFolderOwner) VFolderCreated {
	return VFolderCreated{FolderID: folderID, Name: "data", Host: "local", Owner: owner, Creator: "alice",
		UsageMode: VFolderGeneral, Permission: VFolderReadWrite, Status: VFolderReady, Cloneable: true, At: at(0)}
}

func invited(id uuid.UUID, invitee string, perm VFolderPermission) VFolderInvited {
	return VFolderInvited{Invitation: VFolderInvitation{ID: id, Inviter: "alice", Invitee: invitee,
		Email: invitee + "@example.com", Permission: perm, State: InvitationPending, At: at(1)}}
}

func mustFolder(t *testing.T, events ...Event) *VFolder {
	t.Helper()
	f, err := RehydrateVFolder(recorded(events))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCreateVFolder(t *testing.T) {
	spec := VFolderSpec{ID: folderID, Name: "data", Host: "local", Cloneable: true}
	evs, err := CreateVFolder(spec, alice, allHostPerms, at(0))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{folderCreated(userOwner)})

	for _, c := range []struct {
		name   string
		spec   VFolderSpec
		viewer VFolderViewer
		access VFolderHosts
		want   error
		field  string
	}{
		{"empty name", VFolderSpec{ID: folderID, Host: "local"}, alice, allHostPerms, ErrInvalid, "name"},
		{"dot dot", VFolderSpec{ID: folderID, Name: "..", Host: "local"}, alice, allHostPerms, ErrInvalid, "name"},
		{"slash", VFolderSpec{ID: folderID, Name: "a/b", Host: "local"}, alice, allHostPerms, ErrInvalid, "name"},
		{"spaces", VFolderSpec{ID: folderID, Name: " a", Host: "local"}, alice, allHostPerms, ErrInvalid, "name"},
		{"control", VFolderSpec{ID: folderID, Name: "a\nb", Host: "local"}, alice, allHostPerms, ErrInvalid, "name"},
		{"no host", VFolderSpec{ID: folderID, Name: "a"}, alice, allHostPerms, ErrInvalid, "host"},
		{"bad mode", VFolderSpec{ID: folderID, Name: "a", Host: "local", UsageMode: "x"}, alice, allHostPerms, ErrInvalid, "usage_mode"},
		{"bad perm", VFolderSpec{ID: folderID, Name: "a", Host: "local", Permission: "rwx"}, alice, allHostPerms, ErrInvalid, "permission"},
		{"negative quota", VFolderSpec{ID: folderID, Name: "a", Host: "local", Quota: -1}, alice, allHostPerms, ErrInvalid, "quota"},
		{"no host permission", VFolderSpec{ID: folderID, Name: "a", Host: "nfs"}, alice, allHostPerms, ErrForbidden, ""},
		{"project folder by a user", VFolderSpec{ID: folderID, Name: "a", Host: "local", Owner: projectOwner}, alice, allHostPerms, ErrForbidden, ""},
		{"for another user", VFolderSpec{ID: folderID, Name: "a", Host: "local", Owner: VFolderOwner{Kind: VFolderOwnedByUser, ID: "bob"}}, alice, allHostPerms, ErrForbidden, ""},
		{"monitor", VFolderSpec{ID: folderID, Name: "a", Host: "local"}, monitor1, allHostPerms, ErrForbidden, ""},
		{"other domain's admin", VFolderSpec{ID: folderID, Name: "a", Host: "local", Owner: projectOwner}, admin2, allHostPerms, ErrForbidden, ""},
		{"project folder by its admin", VFolderSpec{ID: folderID, Name: "a", Host: "local", Owner: projectOwner}, admin1, allHostPerms, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CreateVFolder(c.spec, c.viewer, c.access, at(0))
			checkErr(t, err, c.want)
			if c.field != "" {
				if e, ok := err.(*Error); !ok || e.Field != c.field {
					t.Fatalf("error %v: want field %q", err, c.field)
				}
			}
		})
	}
}

func TestVFolderEffectivePermission(t *testing.T) {
	user := mustFolder(t, folderCreated(userOwner), invited(invite1, "bob", VFolderReadOnly),
		VFolderInvitationAccepted{InvitationID: invite1, At: at(2)})
	project := mustFolder(t, folderCreated(projectOwner),
		VFolderShared{UserID: "bob", Permission: VFolderRWDelete, By: "adm", At: at(1)})
	for _, c := range []struct {
		name   string
		f      *VFolder
		viewer VFolderViewer
		want   VFolderPermission
	}{
		{"owner", user, alice, VFolderRWDelete},
		{"accepted invitee", user, bob, VFolderReadOnly},
		{"stranger", user, carol, ""},
		{"other tenant", user, mallory, ""},
		{"domain admin", user, admin1, VFolderRWDelete},
		{"other domain's admin", user, admin2, ""},
		{"superadmin", user, superadmin, VFolderRWDelete},
		{"monitor of the domain", user, monitor1, VFolderReadOnly},
		{"project member", project, alice, VFolderReadWrite},
		{"project member with override", project, bob, VFolderRWDelete},
		{"not a member", project, carol, ""},
		{"other tenant on project", project, mallory, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.f.EffectivePermission(c.viewer)
			if got != c.want || ok != (c.want != "") {
				t.Fatalf("permission = %q, %v; want %q", got, ok, c.want)
			}
		})
	}
}

func TestVFolderInvitations(t *testing.T) {
	base := []Event{folderCreated(userOwner)}
	pending := append(base[:1:1], invited(invite1, "bob", VFolderReadWrite))

	f := mustFolder(t, base...)
	evs, err := f.Invite(alice, allHostPerms, invite1, "bob", "bob@example.com", VFolderReadWrite, at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{invited(invite1, "bob", VFolderReadWrite)})

	_, err = f.Invite(bob, allHostPerms, invite1, "carol", "c@x", VFolderReadWrite, at(1))
	checkErr(t, err, ErrNotFound) // bob cannot even see it
	_, err = f.Invite(alice, VFolderHosts{}, invite1, "bob", "b@x", VFolderReadWrite, at(1))
	checkErr(t, err, ErrForbidden)
	_, err = f.Invite(alice, allHostPerms, invite1, "alice", "a@x", VFolderReadWrite, at(1))
	checkErr(t, err, ErrInvalid)
	_, err = mustFolder(t, pending...).Invite(alice, allHostPerms, invite1, "bob", "b@x", VFolderReadOnly, at(1))
	checkErr(t, err, ErrConflict)

	p := mustFolder(t, pending...)
	_, err = p.AcceptInvitation(carol, invite1, at(2))
	checkErr(t, err, ErrNotFound)
	evs, err = p.AcceptInvitation(bob, invite1, at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderInvitationAccepted{InvitationID: invite1, At: at(2)}})
	evs, err = p.RejectInvitation(bob, invite1, at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderInvitationRejected{InvitationID: invite1, At: at(2)}})
	_, err = p.CancelInvitation(bob, invite1, at(2))
	checkErr(t, err, ErrForbidden) // the invitee sees it, and cannot cancel
	evs, err = p.CancelInvitation(alice, invite1, at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderInvitationCancelled{InvitationID: invite1, By: "alice", At: at(2)}})

	accepted := mustFolder(t, append(pending, VFolderInvitationAccepted{InvitationID: invite1, At: at(2)})...)
	_, err = accepted.AcceptInvitation(bob, invite1, at(3))
	checkErr(t, err, ErrConflict)
	if got := accepted.Members(); got["bob"] != VFolderReadWrite {
		t.Fatalf("members = %v", got)
	}
	evs, err = accepted.Leave(bob, "", at(3))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderLeft{UserID: "bob", By: "bob", At: at(3)}})
	_, err = accepted.Leave(bob, "carol", at(3))
	checkErr(t, err, ErrForbidden)
	left := mustFolder(t, append(pending, VFolderInvitationAccepted{InvitationID: invite1, At: at(2)}, VFolderLeft{UserID: "bob", By: "bob", At: at(3)})...)
	if _, ok := left.EffectivePermission(bob); ok {
		t.Fatal("bob still sees the folder after leaving")
	}
}

// Who may answer or withdraw a pending invitation: the invitee answers,
// its inviter and the folder's managers withdraw; whoever else sees it
// (those three) is forbidden, a monitor always (read-only), and anyone
// else does not see it.
func TestVFolderInvitationAuthorization(t *testing.T) {
	pending := mustFolder(t, folderCreated(userOwner), invited(invite1, "bob", VFolderReadWrite))
	toMonitor := mustFolder(t, folderCreated(userOwner), invited(invite1, "mon", VFolderReadOnly))
	for _, c := range []struct {
		name           string
		f              *VFolder
		viewer         VFolderViewer
		answer, cancel error
	}{
		{"inviter and owner", pending, alice, ErrForbidden, nil},
		{"invitee", pending, bob, nil, ErrForbidden},
		{"stranger", pending, carol, ErrNotFound, ErrNotFound},
		{"other tenant", pending, mallory, ErrNotFound, ErrNotFound},
		{"domain admin", pending, admin1, ErrForbidden, nil},
		{"other domain's admin", pending, admin2, ErrNotFound, ErrNotFound},
		{"superadmin", pending, superadmin, ErrForbidden, nil},
		{"monitor of the domain", pending, monitor1, ErrNotFound, ErrNotFound},
		{"monitor invitee", toMonitor, monitor1, ErrForbidden, ErrForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.f.AcceptInvitation(c.viewer, invite1, at(2))
			checkErr(t, err, c.answer)
			_, err = c.f.RejectInvitation(c.viewer, invite1, at(2))
			checkErr(t, err, c.answer)
			_, err = c.f.CancelInvitation(c.viewer, invite1, at(2))
			checkErr(t, err, c.cancel)
		})
	}
	// Authorization comes before the invitation's state.
	answered := mustFolder(t, folderCreated(userOwner), invited(invite1, "bob", VFolderReadWrite),
		VFolderInvitationRejected{InvitationID: invite1, At: at(2)})
	_, err := answered.AcceptInvitation(carol, invite1, at(3))
	checkErr(t, err, ErrNotFound)
	_, err = answered.CancelInvitation(bob, invite1, at(3))
	checkErr(t, err, ErrForbidden)
	_, err = answered.CancelInvitation(alice, invite1, at(3))
	checkErr(t, err, ErrConflict)
}

// A monitor leaves nothing and removes nobody: it is read-only.
func TestVFolderLeaveByMonitor(t *testing.T) {
	f := mustFolder(t, folderCreated(userOwner), invited(invite1, "bob", VFolderReadOnly),
		VFolderInvitationAccepted{InvitationID: invite1, At: at(2)})
	for _, user := range []string{"", "bob"} {
		_, err := f.Leave(monitor1, user, at(3))
		checkErr(t, err, ErrForbidden)
	}
	_, err := f.Leave(admin1, "bob", at(3))
	checkErr(t, err, nil)
}

func TestVFolderProjectSharing(t *testing.T) {
	f := mustFolder(t, folderCreated(projectOwner))
	evs, err := f.Share(admin1, allHostPerms, "bob", VFolderReadOnly, at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderShared{UserID: "bob", Permission: VFolderReadOnly, By: "adm", At: at(1)}})
	_, err = f.Share(alice, allHostPerms, "bob", VFolderReadOnly, at(1))
	checkErr(t, err, ErrForbidden) // a member sees it but does not administer it
	_, err = f.Share(admin2, allHostPerms, "bob", VFolderReadOnly, at(1))
	checkErr(t, err, ErrNotFound)
	_, err = f.Share(admin1, VFolderHosts{}, "bob", VFolderReadOnly, at(1))
	checkErr(t, err, ErrForbidden)
	_, err = mustFolder(t, folderCreated(userOwner)).Share(alice, allHostPerms, "bob", VFolderReadOnly, at(1))
	checkErr(t, err, ErrConflict)

	shared := mustFolder(t, folderCreated(projectOwner), evs[0])
	evs, err = shared.Unshare(admin1, allHostPerms, "bob", at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderUnshared{UserID: "bob", By: "adm", At: at(2)}})
	evs, err = f.Unshare(admin1, allHostPerms, "bob", at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, nil)
}

func TestVFolderTrashLifecycle(t *testing.T) {
	created := folderCreated(userOwner)
	trashed := VFolderTrashed{By: "alice", At: at(1)}
	started := VFolderDeleteStarted{By: "alice", At: at(2)}
	done := VFolderDeleteFinished{Status: VFolderDeleteComplete, At: at(3)}

	evs, err := mustFolder(t, created).Trash(alice, allHostPerms, at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{trashed})
	_, err = mustFolder(t, created).Trash(alice, VFolderHosts{}, at(1))
	checkErr(t, err, ErrForbidden)
	_, err = mustFolder(t, created).Trash(carol, allHostPerms, at(1))
	checkErr(t, err, ErrNotFound)
	cloning := created
	cloning.Status = VFolderCloning
	_, err = mustFolder(t, cloning).Trash(alice, allHostPerms, at(1))
	checkErr(t, err, ErrConflict) // only ready folders can be deleted

	evs, err = mustFolder(t, created, trashed).Restore(alice, at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderRestored{By: "alice", At: at(2)}})
	_, err = mustFolder(t, created, trashed).Purge(alice, at(2))
	checkErr(t, err, ErrConflict)
	_, err = mustFolder(t, created).StartDelete(alice, at(2))
	checkErr(t, err, ErrConflict)

	evs, err = mustFolder(t, created, trashed).StartDelete(alice, at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{started})
	evs, err = mustFolder(t, created, trashed, started).FinishDelete(true, "", at(3))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{done})
	failed := VFolderDeleteFinished{Status: VFolderDeleteError, Message: "EBUSY", At: at(3)}
	evs, err = mustFolder(t, created, trashed, started, failed).StartDelete(alice, at(4))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderDeleteStarted{By: "alice", At: at(4)}})

	f := mustFolder(t, created, trashed, started, done)
	evs, err = f.Purge(alice, at(4))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderPurged{By: "alice", At: at(4)}})
	gone := mustFolder(t, created, trashed, started, done, evs[0])
	if gone.Exists() {
		t.Fatal("a purged folder still exists")
	}
	if _, err := RehydrateVFolder(recorded([]Event{created, evs[0], trashed})); err == nil {
		t.Fatal("an event after purge was folded")
	}
}

func TestVFolderCloneAndRename(t *testing.T) {
	src := mustFolder(t, folderCreated(userOwner))
	evs, err := src.Clone(VFolderSpec{ID: cloneID, Name: "copy"}, alice, allHostPerms, at(1))
	checkErr(t, err, nil)
	want := VFolderCreated{FolderID: cloneID, Name: "copy", Host: "local", Owner: userOwner, Creator: "alice",
		UsageMode: VFolderGeneral, Permission: VFolderReadWrite, CloneOf: folderID, Status: VFolderCloning, At: at(1)}
	checkEvents(t, evs, []Event{want})
	clone := mustFolder(t, want)
	evs, err = clone.FinishClone(true, "", at(2))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderCloneFinished{Status: VFolderReady, At: at(2)}})

	notCloneable := folderCreated(userOwner)
	notCloneable.Cloneable = false
	_, err = mustFolder(t, notCloneable, invited(invite1, "bob", VFolderReadOnly), VFolderInvitationAccepted{InvitationID: invite1}).
		Clone(VFolderSpec{ID: cloneID, Name: "mine"}, bob, allHostPerms, at(1))
	checkErr(t, err, ErrForbidden)

	evs, err = src.Rename(alice, allHostPerms, "renamed", at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderRenamed{Name: "renamed", By: "alice", At: at(1)}})
	_, err = src.Rename(alice, allHostPerms, "a/b", at(1))
	checkErr(t, err, ErrInvalid)
}

func TestVFolderIndex(t *testing.T) {
	x, err := RehydrateVFolderIndex(nil)
	checkErr(t, err, nil)
	evs, err := x.Claim(folderID, "data", 1, at(0))
	checkErr(t, err, nil)
	claimed := VFolderNameClaimed{FolderID: folderID, Name: "data", At: at(0)}
	checkEvents(t, evs, []Event{claimed})

	x, _ = RehydrateVFolderIndex(recorded([]Event{claimed}))
	evs, err = x.Claim(folderID, "data", 1, at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, nil) // a retried create
	_, err = x.Claim(cloneID, "data", 0, at(1))
	checkErr(t, err, ErrConflict)
	_, err = x.Claim(cloneID, "other", 1, at(1))
	checkErr(t, err, ErrQuotaExceeded)
	evs, err = x.Rename(folderID, "data", "new", at(1))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderNameClaimed{FolderID: folderID, Name: "new", At: at(1)}, VFolderNameReleased{FolderID: folderID, Name: "data", At: at(1)}})

	x, _ = RehydrateVFolderIndex(recorded(append([]Event{claimed}, evs...)))
	if x.Count() != 1 {
		t.Fatalf("count = %d, want 1", x.Count())
	}
	if _, ok := x.Lookup("data"); ok {
		t.Fatal("old name still claimed")
	}
	checkEvents(t, x.Release(folderID, at(2)), []Event{VFolderNameReleased{FolderID: folderID, Name: "new", At: at(2)}})
}

func TestVFolderMount(t *testing.T) {
	ro := mustFolder(t, folderCreated(userOwner), invited(invite1, "bob", VFolderReadOnly), VFolderInvitationAccepted{InvitationID: invite1})
	m, err := ro.MountBy(bob, allHostPerms, VFolderMountRequest{Name: "data"}, "mounts[0]")
	checkErr(t, err, nil)
	if m.Path != "/home/work/data" || m.Permission != VFolderReadOnly {
		t.Fatalf("mount = %+v", m)
	}
	_, err = ro.MountBy(bob, allHostPerms, VFolderMountRequest{Name: "data", Permission: VFolderReadWrite}, "mounts[0]")
	checkErr(t, err, ErrForbidden) // never raise
	_, err = ro.MountBy(carol, allHostPerms, VFolderMountRequest{Name: "data"}, "mounts[0]")
	checkErr(t, err, ErrInvalid) // no existence leak: like an unknown name
	_, err = ro.MountBy(bob, VFolderHosts{}, VFolderMountRequest{Name: "data"}, "mounts[0]")
	checkErr(t, err, ErrForbidden)
	m, err = ro.MountBy(alice, allHostPerms, VFolderMountRequest{Name: "data", Path: "sub/dir", Permission: VFolderReadOnly}, "mounts[0]")
	checkErr(t, err, nil)
	if m.Path != "/home/work/sub/dir" || m.Permission != VFolderReadOnly {
		t.Fatalf("mount = %+v", m)
	}
	for _, p := range []string{"../etc", "/etc", "/home/work", "/home/work/../x", "a\x00b"} {
		if _, err := MountPath("op", "path", "data", p); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	err = CheckMountPaths("op", []VFolderMount{{Name: "a", Path: "/home/work/a"}, {Name: "b", Path: "/home/work/a/b"}})
	checkErr(t, err, ErrInvalid)
	err = CheckMountPaths("op", []VFolderMount{{Name: "a", Path: "/home/work/a"}, {Name: "b", Path: "/home/work/ab"}})
	checkErr(t, err, nil)
}

func TestVFolderFileAccess(t *testing.T) {
	f := mustFolder(t, folderCreated(projectOwner), VFolderShared{UserID: "bob", Permission: VFolderReadOnly})
	checkErr(t, f.CheckFileAccess(alice, allHostPerms, true, false), nil)
	checkErr(t, f.CheckFileAccess(alice, allHostPerms, false, true), ErrForbidden) // rw cannot delete
	checkErr(t, f.CheckFileAccess(bob, allHostPerms, true, false), ErrForbidden)
	checkErr(t, f.CheckFileAccess(bob, allHostPerms, false, false), nil)
	checkErr(t, f.CheckFileAccess(bob, VFolderHosts{}, false, false), ErrForbidden)
	checkErr(t, f.CheckFileAccess(carol, allHostPerms, false, false), ErrNotFound)
	checkErr(t, f.CheckFileAccess(monitor1, allHostPerms, true, false), ErrForbidden)
}

func TestVFolderHostAccessUnion(t *testing.T) {
	a := VFolderHosts{"local": {PermMountInSession, PermCreateVFolder}}
	b := VFolderHosts{"local": {PermCreateVFolder, PermUploadFile}, "nfs": {PermDownloadFile}}
	u := a.Union(b)
	if !u.Allows("local", PermUploadFile) || !u.Allows("local", PermMountInSession) || !u.Allows("nfs", PermDownloadFile) || u.Allows("nfs", PermUploadFile) {
		t.Fatalf("union = %v", u)
	}
	if len(u["local"]) != 3 {
		t.Fatalf("union repeats permissions: %v", u["local"])
	}
}

// TestVFolderOrphanClaim: a name whose folder was never created can be
// taken over once the orphan's stream is closed; the orphan can then
// never be created.
func TestVFolderOrphanClaim(t *testing.T) {
	claimed := VFolderNameClaimed{FolderID: folderID, Name: "data", At: at(0)}
	x, err := RehydrateVFolderIndex(recorded([]Event{claimed}))
	checkErr(t, err, nil)
	if !x.ClaimedAt("data").Equal(at(0)) {
		t.Fatalf("claimed at %v", x.ClaimedAt("data"))
	}
	evs, err := x.TakeOver(folderID, cloneID, "data", at(9))
	checkErr(t, err, nil)
	checkEvents(t, evs, []Event{VFolderNameReleased{FolderID: folderID, Name: "data", At: at(9)}, VFolderNameClaimed{FolderID: cloneID, Name: "data", At: at(9)}})
	_, err = x.TakeOver(cloneID, folderID, "data", at(9))
	checkErr(t, err, ErrConflict)

	f := mustFolder(t, VFolderCreationAbandoned{FolderID: folderID, Name: "data", At: at(9)})
	if f.Exists() {
		t.Fatal("an abandoned folder exists")
	}
	if _, err := RehydrateVFolder(recorded([]Event{VFolderCreationAbandoned{FolderID: folderID}, folderCreated(userOwner)})); err == nil {
		t.Fatal("a folder was created after its creation was abandoned")
	}
}
