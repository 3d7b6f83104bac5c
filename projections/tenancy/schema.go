package tenancy

import "github.com/cairnhq/cairn/projections"

// tables, in creation order.
var tables = []string{
	"domains", "projects", "project_members", "users", "keypairs",
	"keypair_resource_policies", "user_resource_policies", "project_resource_policies",
	"resource_groups", "resource_group_access", "images", "tokens",
}

// ddl is written once with column type markers that each dialect
// replaces: %text%, %int%, %bool%, %json% and %time%; %strict% ends a
// table. Append-only.
var ddl = []string{
	`CREATE TABLE {schema}.domains (
    name                  %text% PRIMARY KEY,
    description           %text% NOT NULL,
    is_active             %bool% NOT NULL,
    total_resource_slots  %json% NOT NULL,
    allowed_vfolder_hosts %json% NOT NULL,
    created_at            %time% NOT NULL,
    modified_at           %time% NOT NULL,
    last_position         %int%  NOT NULL
)%strict%`,
	`CREATE TABLE {schema}.projects (
    domain                %text% NOT NULL,
    name                  %text% NOT NULL,
    description           %text% NOT NULL,
    is_active             %bool% NOT NULL,
    total_resource_slots  %json% NOT NULL,
    allowed_vfolder_hosts %json% NOT NULL,
    resource_policy       %text% NOT NULL,
    created_at            %time% NOT NULL,
    modified_at           %time% NOT NULL,
    last_position         %int%  NOT NULL,
    PRIMARY KEY (domain, name)
)%strict%`,
	`CREATE TABLE {schema}.project_members (
    domain   %text% NOT NULL,
    project  %text% NOT NULL,
    user_id  %text% NOT NULL,
    added_at %time% NOT NULL,
    position %int%  NOT NULL,
    PRIMARY KEY (domain, project, user_id)
)%strict%`,
	`CREATE INDEX {schema}.project_members_user ON project_members (user_id)`,
	`CREATE TABLE {schema}.users (
    id              %text% PRIMARY KEY,
    email           %text% NOT NULL,
    email_key       %text% NOT NULL,
    username        %text% NOT NULL,
    full_name       %text% NOT NULL,
    domain          %text% NOT NULL,
    role            %text% NOT NULL,
    status          %text% NOT NULL,
    password_hash   %text% NOT NULL,
    main_access_key %text% NOT NULL,
    resource_policy %text% NOT NULL,
    created_at      %time% NOT NULL,
    modified_at     %time% NOT NULL,
    last_position   %int%  NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.users_email_key ON users (email_key)`,
	`CREATE INDEX {schema}.users_domain ON users (domain, email_key)`,
	`CREATE TABLE {schema}.keypairs (
    access_key        %text% PRIMARY KEY,
    secret_key        %text% NOT NULL,
    user_id           %text% NOT NULL,
    domain            %text% NOT NULL,
    resource_policy   %text% NOT NULL,
    rate_limit        %int%  NOT NULL,
    is_active         %bool% NOT NULL,
    created_at        %time% NOT NULL,
    modified_at       %time% NOT NULL,
    secret_rotated_at %time%,
    last_position     %int%  NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.keypairs_user ON keypairs (user_id)`,
	`CREATE TABLE {schema}.keypair_resource_policies (
    name          %text% PRIMARY KEY,
    spec          %json% NOT NULL,
    created_at    %time% NOT NULL,
    modified_at   %time% NOT NULL,
    last_position %int%  NOT NULL
)%strict%`,
	`CREATE TABLE {schema}.user_resource_policies (
    name                 %text% PRIMARY KEY,
    max_vfolder_count    %int%  NOT NULL,
    max_quota_scope_size %int%  NOT NULL,
    created_at           %time% NOT NULL,
    modified_at          %time% NOT NULL,
    last_position        %int%  NOT NULL
)%strict%`,
	`CREATE TABLE {schema}.project_resource_policies (
    name                 %text% PRIMARY KEY,
    max_vfolder_count    %int%  NOT NULL,
    max_quota_scope_size %int%  NOT NULL,
    created_at           %time% NOT NULL,
    modified_at          %time% NOT NULL,
    last_position        %int%  NOT NULL
)%strict%`,
	`CREATE TABLE {schema}.resource_groups (
    name          %text% PRIMARY KEY,
    is_active     %bool% NOT NULL,
    spec          %json% NOT NULL,
    created_at    %time% NOT NULL,
    modified_at   %time% NOT NULL,
    last_position %int%  NOT NULL
)%strict%`,
	`CREATE TABLE {schema}.resource_group_access (
    resource_group %text% NOT NULL,
    kind           %text% NOT NULL,
    name           %text% NOT NULL,
    granted_at     %time% NOT NULL,
    position       %int%  NOT NULL,
    PRIMARY KEY (resource_group, kind, name)
)%strict%`,
	`CREATE INDEX {schema}.resource_group_access_grantee ON resource_group_access (kind, name)`,
	`CREATE TABLE {schema}.images (
    reference     %text% NOT NULL,
    architecture  %text% NOT NULL,
    spec          %json% NOT NULL,
    registered_at %time% NOT NULL,
    modified_at   %time% NOT NULL,
    last_position %int%  NOT NULL,
    PRIMARY KEY (reference, architecture)
)%strict%`,
	// API tokens: only their SHA-256 digests.
	`CREATE TABLE {schema}.tokens (
    id            %text% PRIMARY KEY,
    digest        %text% NOT NULL,
    user_id       %text% NOT NULL,
    kind          %text% NOT NULL,
    description   %text% NOT NULL,
    issued_at     %time% NOT NULL,
    expires_at    %time% NOT NULL,
    revoked_at    %time%,
    last_position %int%  NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.tokens_digest ON tokens (digest)`,
	`CREATE INDEX {schema}.tokens_user ON tokens (user_id, issued_at)`,
}

// migrations are the DDL per dialect.
var migrations = projections.PortableDDL(ddl)
