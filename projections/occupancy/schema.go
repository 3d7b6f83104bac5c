package occupancy

import "github.com/cairnhq/cairn/projections"

// migrations are the DDL of the read model per dialect. Append-only.
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.occupancy_sessions (
    session_id    TEXT    PRIMARY KEY,
    access_key    TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    project       TEXT    NOT NULL,
    domain        TEXT    NOT NULL,
    phase         TEXT    NOT NULL,
    last_position INTEGER NOT NULL
) STRICT`,
		`CREATE INDEX occupancy_sessions_access_key_idx ON {schema}.occupancy_sessions (access_key, phase)`,
		`CREATE INDEX occupancy_sessions_user_idx ON {schema}.occupancy_sessions (user_id, phase)`,
		`CREATE INDEX occupancy_sessions_project_idx ON {schema}.occupancy_sessions (project, phase)`,
		`CREATE INDEX occupancy_sessions_domain_idx ON {schema}.occupancy_sessions (domain, phase)`,
		`CREATE TABLE {schema}.occupancy_requested (
    session_id TEXT    NOT NULL,
    slot       TEXT    NOT NULL,
    amount     INTEGER NOT NULL,
    PRIMARY KEY (session_id, slot)
) STRICT`,
		`CREATE TABLE {schema}.occupancy_allocations (
    kernel_id  TEXT    NOT NULL,
    slot       TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    amount     INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, slot)
) STRICT`,
		`CREATE INDEX occupancy_allocations_session_idx ON {schema}.occupancy_allocations (session_id)`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.occupancy_sessions (
    session_id    uuid   PRIMARY KEY,
    access_key    text   NOT NULL,
    user_id       text   NOT NULL,
    project       text   NOT NULL,
    domain        text   NOT NULL,
    phase         text   NOT NULL,
    last_position bigint NOT NULL
)`,
		`CREATE INDEX occupancy_sessions_access_key_idx ON {schema}.occupancy_sessions (access_key, phase)`,
		`CREATE INDEX occupancy_sessions_user_idx ON {schema}.occupancy_sessions (user_id, phase)`,
		`CREATE INDEX occupancy_sessions_project_idx ON {schema}.occupancy_sessions (project, phase)`,
		`CREATE INDEX occupancy_sessions_domain_idx ON {schema}.occupancy_sessions (domain, phase)`,
		`CREATE TABLE {schema}.occupancy_requested (
    session_id uuid   NOT NULL,
    slot       text   NOT NULL,
    amount     bigint NOT NULL,
    PRIMARY KEY (session_id, slot)
)`,
		`CREATE TABLE {schema}.occupancy_allocations (
    kernel_id  uuid   NOT NULL,
    slot       text   NOT NULL,
    session_id uuid   NOT NULL,
    amount     bigint NOT NULL,
    PRIMARY KEY (kernel_id, slot)
)`,
		`CREATE INDEX occupancy_allocations_session_idx ON {schema}.occupancy_allocations (session_id)`,
	},
}
