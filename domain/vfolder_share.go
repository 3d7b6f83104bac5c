package domain

import (
	"time"

	"github.com/google/uuid"
)

// Invite decides an invitation (id) of user invitee (with email) to a user
// folder with a permission. The folder's owner (or an admin) invites, with
// the invite-others host permission; the invitee must not be the owner, a
// member already, or invited already.
func (f *VFolder) Invite(v VFolderViewer, access VFolderHosts, id uuid.UUID, invitee, email string, perm VFolderPermission, now time.Time) ([]Event, error) {
	const op = "vfolder.invite"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	switch {
	case f.owner.Kind != VFolderOwnedByUser:
		return nil, Errorf(op, KindConflict, "a project folder is shared with its project's members; set per-user permissions instead")
	case !perm.Valid():
		return nil, Invalid(op, "permission", "%q is not one of ro, rw, wd", perm)
	case invitee == "":
		return nil, Invalid(op, "email", "must name a user")
	case invitee == f.owner.ID:
		return nil, Invalid(op, "email", "the owner cannot be invited to their own folder")
	case f.members[invitee] != "":
		return nil, Errorf(op, KindConflict, "the folder is already shared with %s", email)
	case f.pendingInvitationFor(invitee) != nil:
		return nil, Errorf(op, KindConflict, "%s already has a pending invitation to this folder", email)
	case f.status != VFolderReady:
		return nil, Errorf(op, KindConflict, "the folder is %s: only a ready folder can be shared", f.status)
	}
	if err := access.require(op, f.host, PermInviteOthers); err != nil {
		return nil, err
	}
	return []Event{VFolderInvited{Invitation: VFolderInvitation{
		ID: id, Inviter: v.UserID, Invitee: invitee, Email: email, Permission: perm, State: InvitationPending, At: now,
	}}}, nil
}

func (f *VFolder) pendingInvitationFor(invitee string) *VFolderInvitation {
	for i := range f.invitations {
		if inv := &f.invitations[i]; inv.Invitee == invitee && inv.State == InvitationPending {
			return inv
		}
	}
	return nil
}

// invitation finds a pending invitation that v may answer (asInvitee: its
// invitee) or withdraw (its inviter, or the folder's managers). Who sees
// an invitation (its invitee, its inviter, the folder's managers) and may
// not do this is forbidden, and so is a monitor (read-only); anyone else
// gets not found.
func (f *VFolder) invitation(op string, v VFolderViewer, id uuid.UUID, asInvitee bool) (*VFolderInvitation, error) {
	for i := range f.invitations {
		inv := &f.invitations[i]
		if inv.ID != id {
			continue
		}
		invitee, inviter, manager := inv.Invitee == v.UserID, inv.Inviter == v.UserID, v.manages(f.owner)
		if !f.Exists() || !(invitee || inviter || manager) {
			break
		}
		switch {
		case v.ReadOnly:
			return nil, Errorf(op, KindForbidden, "the monitor role is read-only")
		case asInvitee && !invitee:
			return nil, Errorf(op, KindForbidden, "only the invitee may answer an invitation")
		case !asInvitee && !inviter && !manager:
			return nil, Errorf(op, KindForbidden, "only the inviter, the folder's owner or an admin may cancel an invitation")
		case inv.State != InvitationPending:
			return nil, Errorf(op, KindConflict, "the invitation is %s already", inv.State)
		}
		return inv, nil
	}
	return nil, Errorf(op, KindNotFound, "no such invitation")
}

// AcceptInvitation makes the invitee a member with the invitation's
// permission.
func (f *VFolder) AcceptInvitation(v VFolderViewer, id uuid.UUID, now time.Time) ([]Event, error) {
	if _, err := f.invitation("vfolder.invitation.accept", v, id, true); err != nil {
		return nil, err
	}
	return []Event{VFolderInvitationAccepted{InvitationID: id, At: now}}, nil
}

// RejectInvitation declines it.
func (f *VFolder) RejectInvitation(v VFolderViewer, id uuid.UUID, now time.Time) ([]Event, error) {
	if _, err := f.invitation("vfolder.invitation.reject", v, id, true); err != nil {
		return nil, err
	}
	return []Event{VFolderInvitationRejected{InvitationID: id, At: now}}, nil
}

// CancelInvitation withdraws it (its inviter, or the folder's managers).
func (f *VFolder) CancelInvitation(v VFolderViewer, id uuid.UUID, now time.Time) ([]Event, error) {
	if _, err := f.invitation("vfolder.invitation.cancel", v, id, false); err != nil {
		return nil, err
	}
	return []Event{VFolderInvitationCancelled{InvitationID: id, By: v.UserID, At: now}}, nil
}

// Leave removes member user from a shared user folder: the member
// themselves, or the folder's managers; never a monitor (read-only).
func (f *VFolder) Leave(v VFolderViewer, user string, now time.Time) ([]Event, error) {
	const op = "vfolder.leave"
	if _, err := f.visible(op, v); err != nil {
		return nil, err
	}
	if v.ReadOnly {
		return nil, Errorf(op, KindForbidden, "the monitor role is read-only")
	}
	if user == "" {
		user = v.UserID
	}
	if user != v.UserID && !v.manages(f.owner) {
		return nil, Errorf(op, KindForbidden, "only the folder's owner or an admin may remove another member")
	}
	if f.members[user] == "" {
		return nil, Errorf(op, KindConflict, "the folder is not shared with that user")
	}
	return []Event{VFolderLeft{UserID: user, By: v.UserID, At: now}}, nil
}

// Share sets a per-user permission on a project folder (admins, with the
// set-user-specific-permission host permission).
func (f *VFolder) Share(v VFolderViewer, access VFolderHosts, user string, perm VFolderPermission, now time.Time) ([]Event, error) {
	const op = "vfolder.share"
	if err := f.checkShare(op, v, access, user); err != nil {
		return nil, err
	}
	if !perm.Valid() {
		return nil, Invalid(op, "permission", "%q is not one of ro, rw, wd", perm)
	}
	if f.overrides[user] == perm {
		return nil, nil
	}
	return []Event{VFolderShared{UserID: user, Permission: perm, By: v.UserID, At: now}}, nil
}

// Unshare removes a per-user permission; none is no events.
func (f *VFolder) Unshare(v VFolderViewer, access VFolderHosts, user string, now time.Time) ([]Event, error) {
	const op = "vfolder.unshare"
	if err := f.checkShare(op, v, access, user); err != nil {
		return nil, err
	}
	if _, ok := f.overrides[user]; !ok {
		return nil, nil
	}
	return []Event{VFolderUnshared{UserID: user, By: v.UserID, At: now}}, nil
}

func (f *VFolder) checkShare(op string, v VFolderViewer, access VFolderHosts, user string) error {
	if err := f.CheckManage(op, v); err != nil {
		return err
	}
	if f.owner.Kind != VFolderOwnedByProject {
		return Errorf(op, KindConflict, "per-user permissions are for project folders; invite users to a user folder")
	}
	if user == "" {
		return Invalid(op, "user", "must name a user")
	}
	return access.require(op, f.host, PermSetUserSpecificPerms)
}
