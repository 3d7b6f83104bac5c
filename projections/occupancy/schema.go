package occupancy

import "github.com/cairnhq/cairn/projections"

// migrations are the DDL of the read model per dialect. Append-only.
var migrations = map[projections.Dialect][]string{
	projections.SQLite:   append(facts[projections.SQLite], totals(projections.SQLite)...),
	projections.Postgres: append(facts[projections.Postgres], totals(projections.Postgres)...),
}

// totals are the migrations that add the running totals per subject,
// filled from the facts already projected.
func totals(d projections.Dialect) []string {
	table := `CREATE TABLE {schema}.occupancy_totals (
    scope   text   NOT NULL,
    subject text   NOT NULL,
    kind    text   NOT NULL,
    slot    text   NOT NULL,
    amount  bigint NOT NULL,
    PRIMARY KEY (scope, subject, kind, slot)
)`
	if d == projections.SQLite {
		table = `CREATE TABLE {schema}.occupancy_totals (
    scope   TEXT    NOT NULL,
    subject TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    slot    TEXT    NOT NULL,
    amount  INTEGER NOT NULL,
    PRIMARY KEY (scope, subject, kind, slot)
) STRICT`
	}
	return []string{
		table,
		// Finds the totals back at 0 without reading the others.
		`CREATE INDEX occupancy_totals_zero_idx ON {schema}.occupancy_totals (scope) WHERE amount = 0`,
		recount(),
	}
}

// facts are the migrations of the fact tables (sessions, requested
// slots, allocations).
var facts = map[projections.Dialect][]string{
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
