package usage

import "github.com/cairnhq/cairn/projections"

// migrations are the DDL of the read model per dialect. Append-only.
// Times are Unix milliseconds and days UTC dates ("2026-11-27"), the
// same in both dialects; the indexes serve the query's filters (all,
// one domain, one project, one user) over a range of days.
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.usage_users (
    user_id  TEXT PRIMARY KEY,
    email    TEXT NOT NULL,
    username TEXT NOT NULL
) STRICT`,
		`CREATE TABLE {schema}.usage_sessions (
    session_id  TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    project     TEXT NOT NULL,
    domain      TEXT NOT NULL,
    started_day TEXT
) STRICT`,
		`CREATE INDEX usage_sessions_day_idx ON {schema}.usage_sessions (started_day)`,
		`CREATE INDEX usage_sessions_user_idx ON {schema}.usage_sessions (user_id, started_day)`,
		`CREATE INDEX usage_sessions_domain_idx ON {schema}.usage_sessions (domain, started_day)`,
		`CREATE INDEX usage_sessions_project_idx ON {schema}.usage_sessions (domain, project, started_day)`,
		`CREATE TABLE {schema}.usage_kernels (
    kernel_id    TEXT    PRIMARY KEY,
    session_id   TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    project      TEXT    NOT NULL,
    domain       TEXT    NOT NULL,
    allocated_ms INTEGER NOT NULL,
    released_ms  INTEGER
) STRICT`,
		`CREATE INDEX usage_kernels_open_idx ON {schema}.usage_kernels (allocated_ms) WHERE released_ms IS NULL`,
		`CREATE TABLE {schema}.usage_kernel_slots (
    kernel_id TEXT    NOT NULL,
    slot      TEXT    NOT NULL,
    amount    INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, slot)
) STRICT`,
		`CREATE TABLE {schema}.usage_days (
    kernel_id TEXT    NOT NULL,
    day       TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    domain    TEXT    NOT NULL,
    millis    INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, day)
) STRICT`,
		`CREATE INDEX usage_days_day_idx ON {schema}.usage_days (day)`,
		`CREATE INDEX usage_days_user_idx ON {schema}.usage_days (user_id, day)`,
		`CREATE INDEX usage_days_domain_idx ON {schema}.usage_days (domain, day)`,
		`CREATE INDEX usage_days_project_idx ON {schema}.usage_days (domain, project, day)`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.usage_users (
    user_id  text PRIMARY KEY,
    email    text NOT NULL,
    username text NOT NULL
)`,
		`CREATE TABLE {schema}.usage_sessions (
    session_id  uuid PRIMARY KEY,
    user_id     text NOT NULL,
    project     text NOT NULL,
    domain      text NOT NULL,
    started_day text
)`,
		`CREATE INDEX usage_sessions_day_idx ON {schema}.usage_sessions (started_day)`,
		`CREATE INDEX usage_sessions_user_idx ON {schema}.usage_sessions (user_id, started_day)`,
		`CREATE INDEX usage_sessions_domain_idx ON {schema}.usage_sessions (domain, started_day)`,
		`CREATE INDEX usage_sessions_project_idx ON {schema}.usage_sessions (domain, project, started_day)`,
		`CREATE TABLE {schema}.usage_kernels (
    kernel_id    uuid   PRIMARY KEY,
    session_id   uuid   NOT NULL,
    user_id      text   NOT NULL,
    project      text   NOT NULL,
    domain       text   NOT NULL,
    allocated_ms bigint NOT NULL,
    released_ms  bigint
)`,
		`CREATE INDEX usage_kernels_open_idx ON {schema}.usage_kernels (allocated_ms) WHERE released_ms IS NULL`,
		`CREATE TABLE {schema}.usage_kernel_slots (
    kernel_id uuid   NOT NULL,
    slot      text   NOT NULL,
    amount    bigint NOT NULL,
    PRIMARY KEY (kernel_id, slot)
)`,
		`CREATE TABLE {schema}.usage_days (
    kernel_id uuid   NOT NULL,
    day       text   NOT NULL,
    user_id   text   NOT NULL,
    project   text   NOT NULL,
    domain    text   NOT NULL,
    millis    bigint NOT NULL,
    PRIMARY KEY (kernel_id, day)
)`,
		`CREATE INDEX usage_days_day_idx ON {schema}.usage_days (day)`,
		`CREATE INDEX usage_days_user_idx ON {schema}.usage_days (user_id, day)`,
		`CREATE INDEX usage_days_domain_idx ON {schema}.usage_days (domain, day)`,
		`CREATE INDEX usage_days_project_idx ON {schema}.usage_days (domain, project, day)`,
	},
}
