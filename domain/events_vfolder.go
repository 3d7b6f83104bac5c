package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the events of a folder's stream (vfolder-<uuid>) and of
// its owner's index stream (vfolder-owner-<kind>-<id>).
const (
	TypeVFolderCreated             = "vfolder.created"
	TypeVFolderRenamed             = "vfolder.renamed"
	TypeVFolderInvited             = "vfolder.invited"
	TypeVFolderInvitationAccepted  = "vfolder.invitation_accepted"
	TypeVFolderInvitationRejected  = "vfolder.invitation_rejected"
	TypeVFolderInvitationCancelled = "vfolder.invitation_cancelled"
	TypeVFolderLeft                = "vfolder.left"
	TypeVFolderShared              = "vfolder.shared"
	TypeVFolderUnshared            = "vfolder.unshared"
	TypeVFolderCloneFinished       = "vfolder.clone_finished"
	TypeVFolderTrashed             = "vfolder.trashed"
	TypeVFolderRestored            = "vfolder.restored"
	TypeVFolderDeleteStarted       = "vfolder.delete_started"
	TypeVFolderDeleteFinished      = "vfolder.delete_finished"
	TypeVFolderPurged              = "vfolder.purged"
	TypeVFolderCreationAbandoned   = "vfolder.creation-abandoned"

	TypeVFolderNameClaimed  = "vfolder.name_claimed"
	TypeVFolderNameReleased = "vfolder.name_released"
)

// VFolderCreated: a folder exists, with its directory made on its host.
// CloneOf is set for a clone, which starts in status cloning.
type VFolderCreated struct {
	FolderID   uuid.UUID         `json:"folder_id"`
	Name       string            `json:"name"`
	Host       string            `json:"host"`
	Owner      VFolderOwner      `json:"owner"`
	Creator    string            `json:"creator"`
	UsageMode  VFolderUsageMode  `json:"usage_mode"`
	Permission VFolderPermission `json:"permission"`
	Quota      int64             `json:"quota,omitempty"`
	Cloneable  bool              `json:"cloneable,omitempty"`
	CloneOf    uuid.UUID         `json:"clone_of,omitzero"`
	Status     VFolderStatus     `json:"status"`
	At         time.Time         `json:"at"`
}

// VFolderRenamed: the folder has a new name (already claimed in its
// owner's index).
type VFolderRenamed struct {
	Name string    `json:"name"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
}

// VFolderInvited: the owner offered a user folder to another user.
type VFolderInvited struct {
	Invitation VFolderInvitation `json:"invitation"`
}

// VFolderInvitationAccepted: the invitee is now a member with the
// invitation's permission.
type VFolderInvitationAccepted struct {
	InvitationID uuid.UUID `json:"invitation_id"`
	At           time.Time `json:"at"`
}

// VFolderInvitationRejected: the invitee declined.
type VFolderInvitationRejected struct {
	InvitationID uuid.UUID `json:"invitation_id"`
	At           time.Time `json:"at"`
}

// VFolderInvitationCancelled: the inviter (or an admin) withdrew it.
type VFolderInvitationCancelled struct {
	InvitationID uuid.UUID `json:"invitation_id"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
}

// VFolderLeft: a member gave up a shared folder, or an owner or admin
// removed them from it.
type VFolderLeft struct {
	UserID string    `json:"user_id"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

// VFolderShared: a project folder's member gets a permission of their own
// (an override of the folder's permission).
type VFolderShared struct {
	UserID     string            `json:"user_id"`
	Permission VFolderPermission `json:"permission"`
	By         string            `json:"by"`
	At         time.Time         `json:"at"`
}

// VFolderUnshared: a per-user permission is removed.
type VFolderUnshared struct {
	UserID string    `json:"user_id"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

// VFolderCloneFinished: the copy of a clone is done (ready) or failed
// (error, with the message).
type VFolderCloneFinished struct {
	Status  VFolderStatus `json:"status"`
	Message string        `json:"message,omitempty"`
	At      time.Time     `json:"at"`
}

// VFolderTrashed: the folder is in the trash (delete-pending); its files
// are kept until it is deleted from the trash.
type VFolderTrashed struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// VFolderRestored: the folder is back from the trash (ready).
type VFolderRestored struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// VFolderDeleteStarted: its files are being removed (delete-ongoing).
type VFolderDeleteStarted struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// VFolderDeleteFinished: the files are gone (delete-complete) or could not
// be removed (delete-error, with the message; deleting again retries).
type VFolderDeleteFinished struct {
	Status  VFolderStatus `json:"status"`
	Message string        `json:"message,omitempty"`
	At      time.Time     `json:"at"`
}

// VFolderPurged: the record is gone; the name is free again.
type VFolderPurged struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// VFolderCreationAbandoned closes the stream of a folder whose creation
// stopped after its name was claimed and was never retried: it can no
// longer be created (its create appends with no-stream expected), so its
// name can be given to another folder.
type VFolderCreationAbandoned struct {
	FolderID uuid.UUID `json:"folder_id"`
	Name     string    `json:"name"`
	At       time.Time `json:"at"`
}

// VFolderNameClaimed: an owner's index reserves a name for a folder.
type VFolderNameClaimed struct {
	FolderID uuid.UUID `json:"folder_id"`
	Name     string    `json:"name"`
	At       time.Time `json:"at"`
}

// VFolderNameReleased: an owner's index frees a folder's name (renamed
// away, purged, or a creation that never happened).
type VFolderNameReleased struct {
	FolderID uuid.UUID `json:"folder_id"`
	Name     string    `json:"name"`
	At       time.Time `json:"at"`
}

func (VFolderCreated) EventType() string             { return TypeVFolderCreated }
func (VFolderRenamed) EventType() string             { return TypeVFolderRenamed }
func (VFolderInvited) EventType() string             { return TypeVFolderInvited }
func (VFolderInvitationAccepted) EventType() string  { return TypeVFolderInvitationAccepted }
func (VFolderInvitationRejected) EventType() string  { return TypeVFolderInvitationRejected }
func (VFolderInvitationCancelled) EventType() string { return TypeVFolderInvitationCancelled }
func (VFolderLeft) EventType() string                { return TypeVFolderLeft }
func (VFolderShared) EventType() string              { return TypeVFolderShared }
func (VFolderUnshared) EventType() string            { return TypeVFolderUnshared }
func (VFolderCloneFinished) EventType() string       { return TypeVFolderCloneFinished }
func (VFolderTrashed) EventType() string             { return TypeVFolderTrashed }
func (VFolderRestored) EventType() string            { return TypeVFolderRestored }
func (VFolderDeleteStarted) EventType() string       { return TypeVFolderDeleteStarted }
func (VFolderDeleteFinished) EventType() string      { return TypeVFolderDeleteFinished }
func (VFolderPurged) EventType() string              { return TypeVFolderPurged }
func (VFolderCreationAbandoned) EventType() string   { return TypeVFolderCreationAbandoned }
func (VFolderNameClaimed) EventType() string         { return TypeVFolderNameClaimed }
func (VFolderNameReleased) EventType() string        { return TypeVFolderNameReleased }
