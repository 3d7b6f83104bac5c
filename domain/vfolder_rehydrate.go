package domain

import (
	"fmt"

	"github.com/google/uuid"
)

// RehydrateVFolder folds a folder stream's events, in revision order from
// 0. No events gives a folder that does not exist (revision -1).
func RehydrateVFolder(events []RecordedEvent) (*VFolder, error) {
	const op = "vfolder.rehydrate"
	events, err := foldable(op, events)
	if err != nil {
		return nil, err
	}
	f := &VFolder{revision: -1}
	for _, re := range events {
		if err := f.apply(re.Event); err != nil {
			return nil, &Error{Op: op, Kind: KindInternal, Message: fmt.Sprintf("revision %d (%s)", re.Revision, re.Event.EventType()), Err: err}
		}
		f.revision = re.Revision
	}
	return f, nil
}

func (f *VFolder) apply(ev Event) error {
	if _, abandoned := ev.(VFolderCreationAbandoned); abandoned {
		if f.exists {
			return fmt.Errorf("creation abandoned after vfolder.created")
		}
		f.purged = true // a stream that never holds a folder
		return nil
	}
	if _, first := ev.(VFolderCreated); first == f.exists {
		if first {
			return fmt.Errorf("folder created twice")
		}
		return fmt.Errorf("event before vfolder.created")
	}
	if f.purged {
		return fmt.Errorf("event after vfolder.purged")
	}
	switch e := ev.(type) {
	case VFolderCreated:
		*f = VFolder{
			id: e.FolderID, name: e.Name, host: e.Host, owner: e.Owner, creator: e.Creator,
			usageMode: e.UsageMode, permission: e.Permission, quota: e.Quota, cloneable: e.Cloneable,
			cloneOf: e.CloneOf, status: e.Status, createdAt: e.At, exists: true,
			members: map[string]VFolderPermission{}, overrides: map[string]VFolderPermission{},
		}
	case VFolderRenamed:
		f.name = e.Name
	case VFolderInvited:
		f.invitations = append(f.invitations, e.Invitation)
	case VFolderInvitationAccepted:
		inv, err := f.invitationByID(e.InvitationID)
		if err != nil {
			return err
		}
		inv.State = InvitationAccepted
		f.members[inv.Invitee] = inv.Permission
	case VFolderInvitationRejected:
		return f.setInvitationState(e.InvitationID, InvitationRejected)
	case VFolderInvitationCancelled:
		return f.setInvitationState(e.InvitationID, InvitationCancelled)
	case VFolderLeft:
		delete(f.members, e.UserID)
	case VFolderShared:
		f.overrides[e.UserID] = e.Permission
	case VFolderUnshared:
		delete(f.overrides, e.UserID)
	case VFolderCloneFinished:
		f.status = e.Status
	case VFolderTrashed:
		f.status = VFolderDeletePending
	case VFolderRestored:
		f.status = VFolderReady
	case VFolderDeleteStarted:
		f.status = VFolderDeleteOngoing
	case VFolderDeleteFinished:
		f.status = e.Status
	case VFolderPurged:
		f.purged = true
	default:
		return fmt.Errorf("%s is not a folder event", ev.EventType())
	}
	return nil
}

func (f *VFolder) invitationByID(id uuid.UUID) (*VFolderInvitation, error) {
	for i := range f.invitations {
		if f.invitations[i].ID == id {
			return &f.invitations[i], nil
		}
	}
	return nil, fmt.Errorf("unknown invitation %s", id)
}

func (f *VFolder) setInvitationState(id uuid.UUID, state VFolderInvitationState) error {
	inv, err := f.invitationByID(id)
	if err != nil {
		return err
	}
	inv.State = state
	return nil
}
