package tenancy

import (
	"sync/atomic"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "tenancy"

// ReadModel is the tenancy projection and its queries, bound to one
// database. Run it with a projections.Projector over the same DB.
type ReadModel struct {
	db  *projections.DB
	sql statements
	// applied is the position of the last tenancy event Apply queued
	// (committed or not yet): see LastApplied.
	applied atomic.Uint64
	// cache holds answers once CacheAnswers has been called.
	cache atomic.Pointer[answerCache]
}

// LastApplied is the position of the last event this read model applied,
// possibly not committed yet. A cache of its answers read when the
// projector's committed position was p stays true while LastApplied() <= p
// (see infra/auth/httpauth).
func (m *ReadModel) LastApplied() uint64 { return m.applied.Load() }

var _ projections.Projection = (*ReadModel)(nil)

// New returns the read model on db.
func New(db *projections.DB) *ReadModel {
	return &ReadModel{db: db, sql: newStatements(db)}
}

// Name implements projections.Projection.
func (*ReadModel) Name() string { return Name }

// EventTypes implements projections.Projection. E-mail reservations and
// abandoned user streams are the write side's and are not listed.
func (*ReadModel) EventTypes() []string {
	return []string{
		domain.TypeDomainCreated, domain.TypeDomainModified, domain.TypeDomainActivated, domain.TypeDomainDeactivated,
		domain.TypeProjectCreated, domain.TypeProjectModified, domain.TypeProjectActivated, domain.TypeProjectDeactivated,
		domain.TypeProjectMemberAdded, domain.TypeProjectMemberRemoved,
		domain.TypeUserCreated, domain.TypeUserModified, domain.TypeUserPasswordChanged, domain.TypeUserMainKeypairSet,
		domain.TypeKeypairIssued, domain.TypeKeypairModified, domain.TypeKeypairActivated, domain.TypeKeypairDeactivated,
		domain.TypeKeypairSecretRotated,
		domain.TypeKeypairPolicyCreated, domain.TypeKeypairPolicyModified,
		domain.TypeUserPolicyCreated, domain.TypeUserPolicyModified,
		domain.TypeProjectPolicyCreated, domain.TypeProjectPolicyModified,
		domain.TypeResourceGroupCreated, domain.TypeResourceGroupModified,
		domain.TypeResourceGroupAccessGranted, domain.TypeResourceGroupAccessRevoked,
		domain.TypeImageRegistered, domain.TypeImageModified, domain.TypeImageForgotten,
		domain.TypeTokenIssued, domain.TypeTokenRevoked,
	}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return append([]string(nil), tables...) }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// statements are the read model's SQL, rewritten for its database.
type statements struct {
	// Writes.
	insertDomain, modifyDomain, activeDomain                   string
	insertProject, modifyProject, activeProject                string
	addMember, removeMember                                    string
	insertUser, modifyUser, userPassword, userMainKey          string
	insertKeypair, modifyKeypair, activeKeypair, rotateSecret  string
	upsertKeypairPolicy, upsertUserPolicy, upsertProjectPolicy string
	insertResourceGroup, modifyResourceGroup, grant, revoke    string
	upsertImage, modifyImage, forgetImage                      string
	insertToken, revokeToken                                   string
	// Reads.
	getDomain, listDomains                                        string
	getProject, listProjects, listProjectsIn, members, projectsOf string
	getUser, listUsersFmt, userByEmail                            string
	getKeypair, listKeypairsFmt, credentials                      string
	getKeypairPolicy, listKeypairPolicies                         string
	getUserPolicy, listUserPolicies                               string
	getProjectPolicy, listProjectPolicies                         string
	getResourceGroup, listResourceGroups, access, allAccess       string
	allowedResourceGroups                                         string
	getImage, listImages, hasImage                                string
	tokenByDigest, getToken, listTokens                           string
}

const (
	domainColumns  = `name, description, is_active, total_resource_slots, allowed_vfolder_hosts, created_at, modified_at, last_position`
	projectColumns = `domain, name, description, is_active, total_resource_slots, allowed_vfolder_hosts, resource_policy,
       created_at, modified_at, last_position`
	userColumns = `id, email, username, full_name, domain, role, status, main_access_key, resource_policy,
       created_at, modified_at, last_position`
	keypairColumns = `k.access_key, k.user_id, k.domain, k.resource_policy, k.rate_limit, k.is_active,
       COALESCE(u.main_access_key = k.access_key, false), k.created_at, k.modified_at, k.secret_rotated_at, k.last_position`
	storagePolicyColumns = `name, max_vfolder_count, max_quota_scope_size, created_at, modified_at, last_position`
	specColumns          = `name, spec, created_at, modified_at, last_position`
	imageColumns         = `reference, architecture, spec, registered_at, modified_at, last_position`
	tokenColumns         = `t.id, t.user_id, t.kind, t.description, t.issued_at, t.expires_at, t.revoked_at, t.last_position`
)

func newStatements(db *projections.DB) statements {
	q := db.SQL
	storagePolicy := func(table string) string {
		return q(`INSERT INTO {schema}.` + table + ` AS p (name, max_vfolder_count, max_quota_scope_size, created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $4, $5)
ON CONFLICT (name) DO UPDATE
   SET max_vfolder_count = excluded.max_vfolder_count, max_quota_scope_size = excluded.max_quota_scope_size,
       modified_at = excluded.modified_at, last_position = excluded.last_position
 WHERE p.last_position < excluded.last_position`)
	}
	return statements{
		insertDomain: q(`INSERT INTO {schema}.domains (` + domainColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (name) DO NOTHING`),
		modifyDomain: q(`UPDATE {schema}.domains
   SET description = $2, total_resource_slots = $3, allowed_vfolder_hosts = $4, modified_at = $5, last_position = $6
 WHERE name = $1 AND last_position < $6`),
		activeDomain: q(`UPDATE {schema}.domains SET is_active = $2, modified_at = $3, last_position = $4
 WHERE name = $1 AND last_position < $4`),
		insertProject: q(`INSERT INTO {schema}.projects (` + projectColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT (domain, name) DO NOTHING`),
		modifyProject: q(`UPDATE {schema}.projects
   SET description = $3, total_resource_slots = $4, allowed_vfolder_hosts = $5, resource_policy = $6,
       modified_at = $7, last_position = $8
 WHERE domain = $1 AND name = $2 AND last_position < $8`),
		activeProject: q(`UPDATE {schema}.projects SET is_active = $3, modified_at = $4, last_position = $5
 WHERE domain = $1 AND name = $2 AND last_position < $5`),
		addMember: q(`INSERT INTO {schema}.project_members (domain, project, user_id, added_at, position)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (domain, project, user_id) DO NOTHING`),
		removeMember: q(`DELETE FROM {schema}.project_members WHERE domain = $1 AND project = $2 AND user_id = $3`),
		insertUser: q(`INSERT INTO {schema}.users (id, email, email_key, username, full_name, domain, role, status,
    password_hash, main_access_key, resource_policy, created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', $10, $11, $11, $12) ON CONFLICT (id) DO NOTHING`),
		modifyUser: q(`UPDATE {schema}.users
   SET username = $2, full_name = $3, role = $4, status = $5, resource_policy = $6, modified_at = $7, last_position = $8
 WHERE id = $1 AND last_position < $8`),
		userPassword: q(`UPDATE {schema}.users SET password_hash = $2, modified_at = $3, last_position = $4
 WHERE id = $1 AND last_position < $4`),
		userMainKey: q(`UPDATE {schema}.users SET main_access_key = $2, modified_at = $3, last_position = $4
 WHERE id = $1 AND last_position < $4`),
		insertKeypair: q(`INSERT INTO {schema}.keypairs (access_key, secret_key, user_id, domain, resource_policy,
    rate_limit, is_active, created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT (access_key) DO NOTHING`),
		modifyKeypair: q(`UPDATE {schema}.keypairs SET resource_policy = $2, rate_limit = $3, modified_at = $4, last_position = $5
 WHERE access_key = $1 AND last_position < $5`),
		activeKeypair: q(`UPDATE {schema}.keypairs SET is_active = $2, modified_at = $3, last_position = $4
 WHERE access_key = $1 AND last_position < $4`),
		rotateSecret: q(`UPDATE {schema}.keypairs SET secret_key = $2, modified_at = $3, secret_rotated_at = $3, last_position = $4
 WHERE access_key = $1 AND last_position < $4`),
		upsertKeypairPolicy: q(`INSERT INTO {schema}.keypair_resource_policies AS p (` + specColumns + `)
VALUES ($1, $2, $3, $3, $4)
ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, modified_at = excluded.modified_at, last_position = excluded.last_position
 WHERE p.last_position < excluded.last_position`),
		upsertUserPolicy:    storagePolicy("user_resource_policies"),
		upsertProjectPolicy: storagePolicy("project_resource_policies"),
		insertResourceGroup: q(`INSERT INTO {schema}.resource_groups (name, is_active, spec, created_at, modified_at, last_position)
VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (name) DO NOTHING`),
		modifyResourceGroup: q(`UPDATE {schema}.resource_groups SET is_active = $2, spec = $3, modified_at = $4, last_position = $5
 WHERE name = $1 AND last_position < $5`),
		grant: q(`INSERT INTO {schema}.resource_group_access (resource_group, kind, name, granted_at, position)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (resource_group, kind, name) DO NOTHING`),
		revoke: q(`DELETE FROM {schema}.resource_group_access WHERE resource_group = $1 AND kind = $2 AND name = $3`),
		// A forgotten image has no row; registering it again inserts one.
		upsertImage: q(`INSERT INTO {schema}.images AS i (` + imageColumns + `)
VALUES ($1, $2, $3, $4, $4, $5)
ON CONFLICT (reference, architecture) DO UPDATE
   SET spec = excluded.spec, registered_at = excluded.registered_at, modified_at = excluded.modified_at,
       last_position = excluded.last_position
 WHERE i.last_position < excluded.last_position`),
		modifyImage: q(`UPDATE {schema}.images SET spec = $3, modified_at = $4, last_position = $5
 WHERE reference = $1 AND architecture = $2 AND last_position < $5`),
		forgetImage: q(`DELETE FROM {schema}.images WHERE reference = $1 AND architecture = $2`),
		insertToken: q(`INSERT INTO {schema}.tokens (id, digest, user_id, kind, description, issued_at, expires_at, last_position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`),
		revokeToken: q(`UPDATE {schema}.tokens SET revoked_at = $2, last_position = $3 WHERE id = $1 AND last_position < $3`),

		getDomain:      q(`SELECT ` + domainColumns + ` FROM {schema}.domains WHERE name = $1`),
		listDomains:    q(`SELECT ` + domainColumns + ` FROM {schema}.domains ORDER BY name`),
		getProject:     q(`SELECT ` + projectColumns + ` FROM {schema}.projects WHERE domain = $1 AND name = $2`),
		listProjects:   q(`SELECT ` + projectColumns + ` FROM {schema}.projects ORDER BY domain, name`),
		listProjectsIn: q(`SELECT ` + projectColumns + ` FROM {schema}.projects WHERE domain = $1 ORDER BY name`),
		members: q(`SELECT domain, project, user_id, added_at FROM {schema}.project_members
 WHERE domain = $1 AND project = $2 ORDER BY user_id`),
		projectsOf: q(`SELECT domain, project, user_id, added_at FROM {schema}.project_members
 WHERE user_id = $1 ORDER BY domain, project`),
		getUser: q(`SELECT ` + userColumns + ` FROM {schema}.users WHERE id = $1`),
		// %s is the WHERE clause.
		listUsersFmt: q(`SELECT ` + userColumns + ` FROM {schema}.users WHERE %s ORDER BY email_key, id`),
		userByEmail:  q(`SELECT ` + userColumns + `, password_hash FROM {schema}.users WHERE email_key = $1 ORDER BY created_at LIMIT 1`),
		getKeypair: q(`SELECT ` + keypairColumns + ` FROM {schema}.keypairs k LEFT JOIN {schema}.users u ON u.id = k.user_id
 WHERE k.access_key = $1`),
		listKeypairsFmt: q(`SELECT ` + keypairColumns + ` FROM {schema}.keypairs k LEFT JOIN {schema}.users u ON u.id = k.user_id
 WHERE %s ORDER BY k.created_at, k.access_key`),
		credentials: q(`SELECT k.access_key, k.secret_key, k.is_active, k.rate_limit, k.resource_policy, k.user_id,
       COALESCE(u.email, ''), COALESCE(u.role, ''), k.domain, COALESCE(u.status, '')
  FROM {schema}.keypairs k LEFT JOIN {schema}.users u ON u.id = k.user_id
 WHERE k.access_key = $1`),
		getKeypairPolicy:    q(`SELECT ` + specColumns + ` FROM {schema}.keypair_resource_policies WHERE name = $1`),
		listKeypairPolicies: q(`SELECT ` + specColumns + ` FROM {schema}.keypair_resource_policies ORDER BY name`),
		getUserPolicy:       q(`SELECT ` + storagePolicyColumns + ` FROM {schema}.user_resource_policies WHERE name = $1`),
		listUserPolicies:    q(`SELECT ` + storagePolicyColumns + ` FROM {schema}.user_resource_policies ORDER BY name`),
		getProjectPolicy:    q(`SELECT ` + storagePolicyColumns + ` FROM {schema}.project_resource_policies WHERE name = $1`),
		listProjectPolicies: q(`SELECT ` + storagePolicyColumns + ` FROM {schema}.project_resource_policies ORDER BY name`),
		getResourceGroup:    q(`SELECT ` + specColumns + ` FROM {schema}.resource_groups WHERE name = $1`),
		listResourceGroups:  q(`SELECT ` + specColumns + ` FROM {schema}.resource_groups ORDER BY name`),
		access:              q(`SELECT kind, name FROM {schema}.resource_group_access WHERE resource_group = $1 ORDER BY kind, name`),
		allAccess:           q(`SELECT resource_group, kind, name FROM {schema}.resource_group_access ORDER BY resource_group, kind, name`),
		allowedResourceGroups: q(`SELECT DISTINCT g.name FROM {schema}.resource_groups g
  JOIN {schema}.resource_group_access a ON a.resource_group = g.name
 WHERE g.is_active AND ((a.kind = 'domain' AND a.name = $1) OR (a.kind = 'project' AND a.name = $2)
       OR (a.kind = 'keypair' AND a.name = $3))
 ORDER BY g.name`),
		getImage:   q(`SELECT ` + imageColumns + ` FROM {schema}.images WHERE reference = $1 AND architecture = $2`),
		listImages: q(`SELECT ` + imageColumns + ` FROM {schema}.images ORDER BY reference, architecture`),
		hasImage:   q(`SELECT COUNT(*) FROM {schema}.images WHERE reference = $1`),
		tokenByDigest: q(`SELECT ` + tokenColumns + `, COALESCE(u.email, ''), COALESCE(u.role, ''), COALESCE(u.domain, ''),
       COALESCE(u.status, ''), COALESCE(u.main_access_key, '')
  FROM {schema}.tokens t LEFT JOIN {schema}.users u ON u.id = t.user_id
 WHERE t.digest = $1`),
		getToken:   q(`SELECT ` + tokenColumns + ` FROM {schema}.tokens t WHERE t.id = $1`),
		listTokens: q(`SELECT ` + tokenColumns + ` FROM {schema}.tokens t WHERE t.user_id = $1 ORDER BY t.issued_at, t.id`),
	}
}
