package audit

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "audit"

// ReadModel is the audit projection and its queries, bound to one
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

// EventTypes implements projections.Projection.
func (*ReadModel) EventTypes() []string { return []string{domain.TypeAuditSealed} }

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return []string{"audit_records"} }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// migrations are the DDL per dialect. Append-only. The record column
// holds the stored JSON verbatim (text, not jsonb: byte for byte).
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.audit_records (
    seq         INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    user_id     TEXT    NOT NULL,
    access_key  TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    entity_type TEXT    NOT NULL,
    entity_id   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    record      TEXT    NOT NULL,
    position    INTEGER NOT NULL
) STRICT`,
		`CREATE INDEX audit_records_at ON {schema}.audit_records (at)`,
		`CREATE INDEX audit_records_user ON {schema}.audit_records (user_id, seq)`,
		`CREATE INDEX audit_records_key ON {schema}.audit_records (access_key, seq)`,
		`CREATE INDEX audit_records_action ON {schema}.audit_records (action, seq)`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.audit_records (
    seq         bigint      PRIMARY KEY,
    at          timestamptz NOT NULL,
    user_id     text        NOT NULL,
    access_key  text        NOT NULL,
    action      text        NOT NULL,
    entity_type text        NOT NULL,
    entity_id   text        NOT NULL,
    outcome     text        NOT NULL,
    status      int         NOT NULL,
    record      text        NOT NULL,
    position    bigint      NOT NULL
)`,
		`CREATE INDEX audit_records_at ON {schema}.audit_records (at)`,
		`CREATE INDEX audit_records_user ON {schema}.audit_records (user_id, seq)`,
		`CREATE INDEX audit_records_key ON {schema}.audit_records (access_key, seq)`,
		`CREATE INDEX audit_records_action ON {schema}.audit_records (action, seq)`,
	},
}

type statements struct {
	insert string
	list   string
}

func newStatements(db *projections.DB) statements {
	// PostgreSQL cannot infer a parameter's type from "$n IS NULL".
	from, to := "$7", "$8"
	if db.Dialect() == projections.Postgres {
		from, to = "CAST($7 AS timestamptz)", "CAST($8 AS timestamptz)"
	}
	return statements{
		insert: db.SQL(`INSERT INTO {schema}.audit_records
    (seq, at, user_id, access_key, action, entity_type, entity_id, outcome, status, record, position)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (seq) DO NOTHING`),
		// Filters that are not set compare with NULL and pass.
		list: db.SQL(`SELECT seq, record FROM {schema}.audit_records
 WHERE seq > $1
   AND ($2 = '' OR user_id = $2 OR access_key = $2)
   AND ($3 = '' OR action = $3)
   AND ($4 = '' OR entity_type = $4)
   AND ($5 = '' OR entity_id = $5)
   AND ($6 = '' OR outcome = $6)
   AND (` + from + ` IS NULL OR at >= ` + from + `)
   AND (` + to + ` IS NULL OR at < ` + to + `)
 ORDER BY seq
 LIMIT $9`),
	}
}
