package vfolders

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "vfolders"

// ReadModel is the vfolders projection and its queries, bound to one
// database. Run it with a projections.Projector over the same DB.
type ReadModel struct {
	db  *projections.DB
	sql statements
}

var _ projections.Projection = (*ReadModel)(nil)

// New returns the read model on db.
func New(db *projections.DB) *ReadModel {
	return &ReadModel{db: db, sql: newStatements(db)}
}

// Name implements projections.Projection.
func (*ReadModel) Name() string { return Name }

// EventTypes implements projections.Projection: every event of a folder's
// stream; the owner index's name claims are not projected.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeVFolderCreated, domain.TypeVFolderRenamed,
		domain.TypeVFolderInvited, domain.TypeVFolderInvitationAccepted, domain.TypeVFolderInvitationRejected,
		domain.TypeVFolderInvitationCancelled, domain.TypeVFolderLeft,
		domain.TypeVFolderShared, domain.TypeVFolderUnshared,
		domain.TypeVFolderCloneFinished, domain.TypeVFolderTrashed, domain.TypeVFolderRestored,
		domain.TypeVFolderDeleteStarted, domain.TypeVFolderDeleteFinished, domain.TypeVFolderPurged,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return append([]string(nil), tables...) }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// statements are the read model's SQL, rewritten for its database.
type statements struct {
	insertFolder, rename, status, touch                    string
	deleteFolder, deleteUsers, deleteInvitations           string
	insertInvitation, invitationState, acceptMember        string
	upsertUser, deleteUser                                 string
	getFolder, storedBy, sharedNamed, users, pending       string
	invitationsTo, invitationsFrom, getInvitation, visible string
	// folders and memberFolders are the FROM clauses of visible's branches.
	folders, memberFolders string
}

// folderColumns are the columns scanFolder reads, from table alias f.
const folderColumns = `f.id, f.name, f.host, f.owner_kind, f.owner_id, f.domain, f.creator, f.usage_mode, f.permission,
       f.quota, f.cloneable, f.clone_of, f.status, f.status_message, f.created_at, f.modified_at, f.last_position`

const invitationColumns = `i.id, i.folder_id, COALESCE(f.name, ''), i.inviter, i.invitee, i.email, i.permission, i.state,
       i.created_at, i.modified_at, i.last_position`

func newStatements(db *projections.DB) statements {
	q := db.SQL
	return statements{
		insertFolder: q(`INSERT INTO {schema}.vfolders (id, name, host, owner_kind, owner_id, domain, creator, usage_mode,
    permission, quota, cloneable, clone_of, status, status_message, created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, '', $14, $14, $15) ON CONFLICT (id) DO NOTHING`),
		rename: q(`UPDATE {schema}.vfolders SET name = $2, modified_at = $3, last_position = $4
 WHERE id = $1 AND last_position < $4`),
		status: q(`UPDATE {schema}.vfolders SET status = $2, status_message = $3, modified_at = $4, last_position = $5
 WHERE id = $1 AND last_position < $5`),
		touch:             q(`UPDATE {schema}.vfolders SET modified_at = $2, last_position = $3 WHERE id = $1 AND last_position < $3`),
		deleteFolder:      q(`DELETE FROM {schema}.vfolders WHERE id = $1`),
		deleteUsers:       q(`DELETE FROM {schema}.vfolder_users WHERE folder_id = $1`),
		deleteInvitations: q(`DELETE FROM {schema}.vfolder_invitations WHERE folder_id = $1`),
		insertInvitation: q(`INSERT INTO {schema}.vfolder_invitations (id, folder_id, inviter, invitee, email, permission, state,
    created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT (id) DO NOTHING`),
		invitationState: q(`UPDATE {schema}.vfolder_invitations SET state = $2, modified_at = $3, last_position = $4
 WHERE id = $1 AND last_position < $4`),
		acceptMember: q(`INSERT INTO {schema}.vfolder_users AS u (folder_id, user_id, kind, permission, position)
SELECT folder_id, invitee, 'member', permission, $2 FROM {schema}.vfolder_invitations WHERE id = $1
ON CONFLICT (folder_id, user_id, kind) DO UPDATE SET permission = excluded.permission, position = excluded.position
 WHERE u.position < excluded.position`),
		upsertUser: q(`INSERT INTO {schema}.vfolder_users AS u (folder_id, user_id, kind, permission, position)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (folder_id, user_id, kind) DO UPDATE SET permission = excluded.permission, position = excluded.position
 WHERE u.position < excluded.position`),
		deleteUser: q(`DELETE FROM {schema}.vfolder_users WHERE folder_id = $1 AND user_id = $2 AND kind = $3`),

		getFolder: q(`SELECT ` + folderColumns + ` FROM {schema}.vfolders f WHERE f.id = $1`),
		storedBy:  q(`SELECT f.id, f.host, f.status FROM {schema}.vfolders f WHERE f.owner_kind = $1 AND f.owner_id = $2`),
		sharedNamed: q(`SELECT f.id FROM {schema}.vfolders f
  JOIN {schema}.vfolder_users u ON u.folder_id = f.id AND u.user_id = $1 AND u.kind = 'member'
 WHERE f.name = $2 AND f.owner_kind = 'user' ORDER BY f.id`),
		users: q(`SELECT user_id, kind, permission FROM {schema}.vfolder_users WHERE folder_id = $1 ORDER BY kind, user_id`),
		// The checkpoint and the rows in one statement: one snapshot.
		pending: q(`SELECT c.position, COALESCE(f.id, '') FROM {schema}.projection_checkpoints c
  LEFT JOIN {schema}.vfolders f ON f.status IN ('cloning', 'delete-ongoing')
 WHERE c.name = $1 ORDER BY f.id`),
		invitationsTo: q(`SELECT ` + invitationColumns + ` FROM {schema}.vfolder_invitations i
  LEFT JOIN {schema}.vfolders f ON f.id = i.folder_id
 WHERE i.invitee = $1 AND ($2 = '' OR i.state = $2) ORDER BY i.created_at DESC, i.id`),
		invitationsFrom: q(`SELECT ` + invitationColumns + ` FROM {schema}.vfolder_invitations i
  LEFT JOIN {schema}.vfolders f ON f.id = i.folder_id
 WHERE i.inviter = $1 AND ($2 = '' OR i.state = $2) ORDER BY i.created_at DESC, i.id`),
		getInvitation: q(`SELECT ` + invitationColumns + ` FROM {schema}.vfolder_invitations i
  LEFT JOIN {schema}.vfolders f ON f.id = i.folder_id WHERE i.id = $1`),
		folders:       q(`{schema}.vfolders f`),
		memberFolders: q(`{schema}.vfolder_users u CROSS JOIN {schema}.vfolders f`),
		// %s: the relation and effective permission expressions, the FROM
		// clause (folders or memberFolders), a branch's condition and the
		// filters (see Visible).
		visible: q(`SELECT ` + folderColumns + `, %s AS relation, %s AS effective
  FROM %s
  LEFT JOIN {schema}.vfolder_users m ON m.folder_id = f.id AND m.user_id = $1 AND m.kind = 'member'
  LEFT JOIN {schema}.vfolder_users o ON o.folder_id = f.id AND o.user_id = $1 AND o.kind = 'override'
 WHERE (%s)%s`),
	}
}
