package vfolders

import (
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Folder is one virtual folder as the read model shows it.
type Folder struct {
	ID         uuid.UUID                `json:"id"`
	Name       string                   `json:"name"`
	Host       string                   `json:"host"`
	Owner      domain.VFolderOwner      `json:"owner"`
	Creator    string                   `json:"creator"`
	UsageMode  domain.VFolderUsageMode  `json:"usage_mode"`
	Permission domain.VFolderPermission `json:"permission"`
	// Quota is the folder's size limit in bytes (0: none of its own).
	Quota     int64                `json:"quota"`
	Cloneable bool                 `json:"cloneable"`
	CloneOf   uuid.UUID            `json:"clone_of"`
	Status    domain.VFolderStatus `json:"status"`
	// StatusMessage says why a clone or a deletion failed.
	StatusMessage string    `json:"status_message"`
	CreatedAt     time.Time `json:"created_at"`
	ModifiedAt    time.Time `json:"modified_at"`
	// Position is the log position of the last event the row reflects.
	Position uint64 `json:"position"`
}

// Relation is how a viewer comes to see a folder.
type Relation string

const (
	RelationOwn     Relation = "own"     // a user folder of the viewer
	RelationShared  Relation = "shared"  // a user folder shared with the viewer
	RelationProject Relation = "project" // a folder of one of the viewer's projects
	RelationDomain  Relation = "domain"  // seen through an admin's or monitor's reach
)

// Visible is a folder with what the viewer may do with it.
type Visible struct {
	Folder
	Relation Relation `json:"relation"`
	// Effective is the viewer's permission on the folder's files.
	Effective domain.VFolderPermission `json:"effective_permission"`
}

// User is a user a folder is shared with: a member of a user folder
// (kind member) or a per-user permission of a project folder (override).
type User struct {
	UserID     string                   `json:"user_id"`
	Kind       string                   `json:"kind"`
	Permission domain.VFolderPermission `json:"permission"`
}

// User kinds.
const (
	KindMember   = "member"
	KindOverride = "override"
)

// Invitation is one invitation to a user folder.
type Invitation struct {
	ID         uuid.UUID                     `json:"id"`
	FolderID   uuid.UUID                     `json:"folder_id"`
	FolderName string                        `json:"folder_name"`
	Inviter    string                        `json:"inviter"`
	Invitee    string                        `json:"invitee"`
	Email      string                        `json:"email"`
	Permission domain.VFolderPermission      `json:"permission"`
	State      domain.VFolderInvitationState `json:"state"`
	CreatedAt  time.Time                     `json:"created_at"`
	ModifiedAt time.Time                     `json:"modified_at"`
	Position   uint64                        `json:"position"`
}
