package vfolders

import (
	"github.com/cairnhq/cairn/projections"
)

// tables, in creation order.
var tables = []string{"vfolders", "vfolder_users", "vfolder_invitations"}

// ddl is written once with column type markers that each dialect
// replaces: %text%, %int%, %bool% and %time%; %strict% ends a table.
// Append-only.
var ddl = []string{
	`CREATE TABLE {schema}.vfolders (
    id             %text% PRIMARY KEY,
    name           %text% NOT NULL,
    host           %text% NOT NULL,
    owner_kind     %text% NOT NULL,
    owner_id       %text% NOT NULL,
    domain         %text% NOT NULL,
    creator        %text% NOT NULL,
    usage_mode     %text% NOT NULL,
    permission     %text% NOT NULL,
    quota          %int%  NOT NULL,
    cloneable      %bool% NOT NULL,
    clone_of       %text% NOT NULL,
    status         %text% NOT NULL,
    status_message %text% NOT NULL,
    created_at     %time% NOT NULL,
    modified_at    %time% NOT NULL,
    last_position  %int%  NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.vfolders_owner ON vfolders (owner_kind, owner_id, name)`,
	`CREATE INDEX {schema}.vfolders_domain ON vfolders (domain, name)`,
	`CREATE INDEX {schema}.vfolders_status ON vfolders (status)`,
	`CREATE TABLE {schema}.vfolder_users (
    folder_id  %text% NOT NULL,
    user_id    %text% NOT NULL,
    kind       %text% NOT NULL,
    permission %text% NOT NULL,
    position   %int%  NOT NULL,
    PRIMARY KEY (folder_id, user_id, kind)
)%strict%`,
	`CREATE INDEX {schema}.vfolder_users_user ON vfolder_users (user_id, kind)`,
	`CREATE TABLE {schema}.vfolder_invitations (
    id            %text% PRIMARY KEY,
    folder_id     %text% NOT NULL,
    inviter       %text% NOT NULL,
    invitee       %text% NOT NULL,
    email         %text% NOT NULL,
    permission    %text% NOT NULL,
    state         %text% NOT NULL,
    created_at    %time% NOT NULL,
    modified_at   %time% NOT NULL,
    last_position %int%  NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.vfolder_invitations_invitee ON vfolder_invitations (invitee, state)`,
	`CREATE INDEX {schema}.vfolder_invitations_inviter ON vfolder_invitations (inviter, state)`,
	`CREATE INDEX {schema}.vfolder_invitations_folder ON vfolder_invitations (folder_id)`,
	// Pages of folders in (name, id) order: one index per way a viewer
	// sees folders (own and project; domain; everything, for superadmins),
	// so that a page reads about its own length of rows.
	`CREATE INDEX {schema}.vfolders_owner_page ON vfolders (owner_kind, owner_id, name, id)`,
	`CREATE INDEX {schema}.vfolders_domain_page ON vfolders (domain, name, id)`,
	`CREATE INDEX {schema}.vfolders_page ON vfolders (name, id)`,
	`DROP INDEX {schema}.vfolders_owner`,
	`DROP INDEX {schema}.vfolders_domain`,
	// The folders with work pending (PendingJobs) only: an index over
	// every status led the planner to read all the listed statuses' folders
	// and sort them instead of walking a page index.
	`CREATE INDEX {schema}.vfolders_jobs ON vfolders (status) WHERE status IN ('cloning', 'delete-ongoing')`,
	`DROP INDEX {schema}.vfolders_status`,
	// StoredBy (an owner's usage) reads this index alone.
	`CREATE INDEX {schema}.vfolders_owner_stored ON vfolders (owner_kind, owner_id, id, host, status)`,
}

// migrations are the DDL per dialect.
var migrations = projections.PortableDDL(ddl)
