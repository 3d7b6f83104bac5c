package sessions

import "github.com/cairnhq/cairn/projections"

// migrations are the DDL of the read model per dialect. Append-only: add a
// statement to change the schema, never edit one that has shipped.
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.sessions (
    id               TEXT    PRIMARY KEY,
    name             TEXT    NOT NULL,
    owner_user_id    TEXT    NOT NULL,
    owner_access_key TEXT    NOT NULL,
    domain           TEXT    NOT NULL,
    project          TEXT    NOT NULL,
    resource_group   TEXT    NOT NULL,
    type             TEXT    NOT NULL,
    image            TEXT    NOT NULL,
    command          TEXT    NOT NULL,
    priority         INTEGER NOT NULL,
    cluster_mode     TEXT    NOT NULL,
    cluster_size     INTEGER NOT NULL,
    status           TEXT    NOT NULL,
    status_reason    TEXT    NOT NULL,
    status_message   TEXT    NOT NULL,
    pending_details  TEXT    NOT NULL,
    pending_tries    INTEGER NOT NULL,
    agent_ids        TEXT    NOT NULL,
    devices          TEXT    NOT NULL,
    requested_slots  TEXT    NOT NULL,
    result           TEXT    NOT NULL,
    exit_code        INTEGER,
    created_at       INTEGER NOT NULL,
    scheduled_at     INTEGER,
    started_at       INTEGER,
    terminated_at    INTEGER,
    created_position INTEGER NOT NULL UNIQUE,
    last_position    INTEGER NOT NULL
) STRICT`,
		`CREATE INDEX sessions_owner_idx ON {schema}.sessions (owner_user_id, created_position)`,
		`CREATE INDEX sessions_status_idx ON {schema}.sessions (status, created_position)`,
		`CREATE TABLE {schema}.kernels (
    id              TEXT    PRIMARY KEY,
    session_id      TEXT    NOT NULL,
    idx             INTEGER NOT NULL,
    role            TEXT    NOT NULL,
    agent_id        TEXT    NOT NULL,
    container_id    TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    status_reason   TEXT    NOT NULL,
    status_message  TEXT    NOT NULL,
    exit_code       INTEGER,
    requested_slots TEXT    NOT NULL,
    devices         TEXT    NOT NULL,
    last_position   INTEGER NOT NULL,
    UNIQUE (session_id, idx)
) STRICT`,
		`CREATE INDEX kernels_agent_idx ON {schema}.kernels (agent_id)`,
		// A session's agents and device shares are its kernels' (read
		// with them), not a copy written again at each placement.
		`ALTER TABLE {schema}.sessions DROP COLUMN agent_ids`,
		`ALTER TABLE {schema}.sessions DROP COLUMN devices`,
		// No query looks kernels up by agent; every placement paid for
		// the index.
		`DROP INDEX {schema}.kernels_agent_idx`,
		// What placement checks of a pending session besides its slots
		// (queue.go: the scheduler's queue, explained). Rows written
		// before these columns hold their defaults until a rebuild.
		`ALTER TABLE {schema}.sessions ADD COLUMN starts_at INTEGER`,
		`ALTER TABLE {schema}.sessions ADD COLUMN architecture TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE {schema}.sessions ADD COLUMN dependencies TEXT NOT NULL DEFAULT '[]'`,
		// The ports a running kernel's agent published (kernel.running).
		`ALTER TABLE {schema}.kernels ADD COLUMN service_ports TEXT NOT NULL DEFAULT '[]'`,
		// The latest use of the session: the latest successful access
		// record about it (access.logged, access.batch-logged), what the
		// idle limit counts from.
		`ALTER TABLE {schema}.sessions ADD COLUMN last_used_at INTEGER`,
		// A starting kernel's latest image pull progress
		// (kernel.pull-progressed) and the apps of a running kernel that
		// answered its agent (kernel.apps-ready).
		`ALTER TABLE {schema}.kernels ADD COLUMN pull_progress TEXT NOT NULL DEFAULT 'null'`,
		`ALTER TABLE {schema}.kernels ADD COLUMN apps_ready TEXT NOT NULL DEFAULT '[]'`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.sessions (
    id               uuid        PRIMARY KEY,
    name             text        NOT NULL,
    owner_user_id    text        NOT NULL,
    owner_access_key text        NOT NULL,
    domain           text        NOT NULL,
    project          text        NOT NULL,
    resource_group   text        NOT NULL,
    type             text        NOT NULL,
    image            text        NOT NULL,
    command          text        NOT NULL,
    priority         int         NOT NULL,
    cluster_mode     text        NOT NULL,
    cluster_size     int         NOT NULL,
    status           text        NOT NULL,
    status_reason    text        NOT NULL,
    status_message   text        NOT NULL,
    pending_details  jsonb       NOT NULL,
    pending_tries    int         NOT NULL,
    agent_ids        jsonb       NOT NULL,
    devices          jsonb       NOT NULL,
    requested_slots  jsonb       NOT NULL,
    result           text        NOT NULL,
    exit_code        int,
    created_at       timestamptz NOT NULL,
    scheduled_at     timestamptz,
    started_at       timestamptz,
    terminated_at    timestamptz,
    created_position bigint      NOT NULL UNIQUE,
    last_position    bigint      NOT NULL
)`,
		`CREATE INDEX sessions_owner_idx ON {schema}.sessions (owner_user_id, created_position)`,
		`CREATE INDEX sessions_status_idx ON {schema}.sessions (status, created_position)`,
		`CREATE TABLE {schema}.kernels (
    id              uuid   PRIMARY KEY,
    session_id      uuid   NOT NULL,
    idx             int    NOT NULL,
    role            text   NOT NULL,
    agent_id        text   NOT NULL,
    container_id    text   NOT NULL,
    status          text   NOT NULL,
    status_reason   text   NOT NULL,
    status_message  text   NOT NULL,
    exit_code       int,
    requested_slots jsonb  NOT NULL,
    devices         jsonb  NOT NULL,
    last_position   bigint NOT NULL,
    UNIQUE (session_id, idx)
)`,
		`CREATE INDEX kernels_agent_idx ON {schema}.kernels (agent_id)`,
		`ALTER TABLE {schema}.sessions DROP COLUMN agent_ids`,
		`ALTER TABLE {schema}.sessions DROP COLUMN devices`,
		// No query looks kernels up by agent; every placement paid for
		// the index.
		`DROP INDEX {schema}.kernels_agent_idx`,
		// A kernel's updates change no indexed column, nor do a pending
		// session's new reasons: with room left on the row's page they
		// are HOT (no index entry written).
		`ALTER TABLE {schema}.kernels SET (fillfactor = 70)`,
		`ALTER TABLE {schema}.sessions SET (fillfactor = 80)`,
		`ALTER TABLE {schema}.sessions ADD COLUMN starts_at timestamptz`,
		`ALTER TABLE {schema}.sessions ADD COLUMN architecture text NOT NULL DEFAULT ''`,
		`ALTER TABLE {schema}.sessions ADD COLUMN dependencies jsonb NOT NULL DEFAULT '[]'`,
		`ALTER TABLE {schema}.kernels ADD COLUMN service_ports jsonb NOT NULL DEFAULT '[]'`,
		`ALTER TABLE {schema}.sessions ADD COLUMN last_used_at timestamptz`,
		`ALTER TABLE {schema}.kernels ADD COLUMN pull_progress jsonb NOT NULL DEFAULT 'null'`,
		`ALTER TABLE {schema}.kernels ADD COLUMN apps_ready jsonb NOT NULL DEFAULT '[]'`,
	},
}
