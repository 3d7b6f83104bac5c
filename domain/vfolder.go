package domain

import (
	"maps"
	"time"

	"github.com/google/uuid"
)

// VFolderPermission is what a viewer may do with a folder's files. The
// order matters: ro < rw < wd (read-write plus delete).
type VFolderPermission string

const (
	VFolderReadOnly  VFolderPermission = "ro"
	VFolderReadWrite VFolderPermission = "rw"
	VFolderRWDelete  VFolderPermission = "wd"
)

// rank orders permissions; 0 is "none or unknown".
func (p VFolderPermission) rank() int {
	switch p {
	case VFolderReadOnly:
		return 1
	case VFolderReadWrite:
		return 2
	case VFolderRWDelete:
		return 3
	}
	return 0
}

// Valid reports whether p is one of ro, rw, wd.
func (p VFolderPermission) Valid() bool { return p.rank() > 0 }

// Covers reports whether p allows everything q allows.
func (p VFolderPermission) Covers(q VFolderPermission) bool {
	return p.Valid() && q.Valid() && p.rank() >= q.rank()
}

// CanWrite reports whether p allows writing files.
func (p VFolderPermission) CanWrite() bool { return p.rank() >= 2 }

// CanDeleteFiles reports whether p allows deleting files.
func (p VFolderPermission) CanDeleteFiles() bool { return p.rank() >= 3 }

// VFolderUsageMode is what a folder holds.
type VFolderUsageMode string

const (
	VFolderGeneral VFolderUsageMode = "general"
	VFolderModel   VFolderUsageMode = "model"
	VFolderData    VFolderUsageMode = "data"
)

// VFolderOwnerKind says whether a user or a project owns a folder.
type VFolderOwnerKind string

const (
	VFolderOwnedByUser    VFolderOwnerKind = "user"
	VFolderOwnedByProject VFolderOwnerKind = "project"
)

// VFolderOwner is who owns a folder: a user or a project, and the domain
// it lives in (for domain admins' reach).
type VFolderOwner struct {
	Kind   VFolderOwnerKind `json:"kind"`
	ID     string           `json:"id"`
	Domain string           `json:"domain"`
}

// VFolderStatus is a folder's lifecycle status.
type VFolderStatus string

const (
	VFolderReady          VFolderStatus = "ready"
	VFolderPerforming     VFolderStatus = "performing"
	VFolderCloning        VFolderStatus = "cloning"
	VFolderError          VFolderStatus = "error"
	VFolderDeletePending  VFolderStatus = "delete-pending" // in the trash
	VFolderDeleteOngoing  VFolderStatus = "delete-ongoing"
	VFolderDeleteComplete VFolderStatus = "delete-complete"
	VFolderDeleteError    VFolderStatus = "delete-error"
)

// VFolderInvitationState is where an invitation stands.
type VFolderInvitationState string

const (
	InvitationPending   VFolderInvitationState = "pending"
	InvitationAccepted  VFolderInvitationState = "accepted"
	InvitationRejected  VFolderInvitationState = "rejected"
	InvitationCancelled VFolderInvitationState = "cancelled"
)

// VFolderInvitation is an owner's offer to share a user folder.
type VFolderInvitation struct {
	ID         uuid.UUID              `json:"id"`
	Inviter    string                 `json:"inviter"`
	Invitee    string                 `json:"invitee"`
	Email      string                 `json:"email"`
	Permission VFolderPermission      `json:"permission"`
	State      VFolderInvitationState `json:"state"`
	At         time.Time              `json:"at"`
}

// VFolder is the virtual folder aggregate (stream vfolder-<uuid>): its
// identity, ownership, sharing and lifecycle. The files live on a storage
// host, in a directory named by the id; their usage is measured there, not
// recorded as events.
type VFolder struct {
	id         uuid.UUID
	name       string
	host       string
	owner      VFolderOwner
	creator    string
	usageMode  VFolderUsageMode
	permission VFolderPermission
	quota      int64
	cloneable  bool
	cloneOf    uuid.UUID
	status     VFolderStatus
	// members are users a user folder is shared with (accepted
	// invitations), by user id.
	members map[string]VFolderPermission
	// overrides are per-user permissions on a project folder.
	overrides   map[string]VFolderPermission
	invitations []VFolderInvitation
	createdAt   time.Time

	exists   bool
	purged   bool
	revision int64
}

func (f *VFolder) ID() uuid.UUID                 { return f.id }
func (f *VFolder) Name() string                  { return f.name }
func (f *VFolder) Host() string                  { return f.host }
func (f *VFolder) Owner() VFolderOwner           { return f.owner }
func (f *VFolder) Creator() string               { return f.creator }
func (f *VFolder) UsageMode() VFolderUsageMode   { return f.usageMode }
func (f *VFolder) Permission() VFolderPermission { return f.permission }
func (f *VFolder) Quota() int64                  { return f.quota }
func (f *VFolder) Cloneable() bool               { return f.cloneable }
func (f *VFolder) CloneOf() uuid.UUID            { return f.cloneOf }
func (f *VFolder) Status() VFolderStatus         { return f.status }
func (f *VFolder) CreatedAt() time.Time          { return f.createdAt }
func (f *VFolder) Exists() bool                  { return f.exists && !f.purged }
func (f *VFolder) Revision() int64               { return f.revision }

// Members returns the users a user folder is shared with.
func (f *VFolder) Members() map[string]VFolderPermission { return maps.Clone(f.members) }

// Overrides returns the per-user permissions of a project folder.
func (f *VFolder) Overrides() map[string]VFolderPermission { return maps.Clone(f.overrides) }

// Invitations returns every invitation, in the order they were sent.
func (f *VFolder) Invitations() []VFolderInvitation {
	return append([]VFolderInvitation(nil), f.invitations...)
}

// IsDotFolder reports whether the folder is mounted into every session of
// its owner automatically (a name starting with a dot).
func (f *VFolder) IsDotFolder() bool { return len(f.name) > 0 && f.name[0] == '.' }
