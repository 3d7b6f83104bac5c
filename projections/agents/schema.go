package agents

import "github.com/cairnhq/cairn/projections"

// migrations are the DDL of the read model per dialect. Append-only.
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.agents (
    id              TEXT    PRIMARY KEY,
    architecture    TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    capacity        TEXT    NOT NULL,
    devices         TEXT    NOT NULL,
    occupied        TEXT    NOT NULL,
    device_occupied TEXT    NOT NULL,
    allocations     INTEGER NOT NULL,
    registered_at   INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    lost_at         INTEGER,
    last_position   INTEGER NOT NULL
) STRICT`,
		`CREATE TABLE {schema}.agent_allocations (
    agent_id     TEXT    NOT NULL,
    kernel_id    TEXT    NOT NULL,
    session_id   TEXT    NOT NULL,
    slots        TEXT    NOT NULL,
    devices      TEXT    NOT NULL,
    allocated_at INTEGER NOT NULL,
    position     INTEGER NOT NULL,
    PRIMARY KEY (agent_id, kernel_id)
) STRICT`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.agents (
    id              text        PRIMARY KEY,
    architecture    text        NOT NULL,
    status          text        NOT NULL,
    capacity        jsonb       NOT NULL,
    devices         jsonb       NOT NULL,
    occupied        jsonb       NOT NULL,
    device_occupied jsonb       NOT NULL,
    allocations     int         NOT NULL,
    registered_at   timestamptz NOT NULL,
    last_seen_at    timestamptz NOT NULL,
    lost_at         timestamptz,
    last_position   bigint      NOT NULL
)`,
		`CREATE TABLE {schema}.agent_allocations (
    agent_id     text        NOT NULL,
    kernel_id    uuid        NOT NULL,
    session_id   uuid        NOT NULL,
    slots        jsonb       NOT NULL,
    devices      jsonb       NOT NULL,
    allocated_at timestamptz NOT NULL,
    position     bigint      NOT NULL,
    PRIMARY KEY (agent_id, kernel_id)
)`,
	},
}
