package audit

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's). It was "audit" while
// the read model held one row per record; the run layout is a new
// projection, built from the start of the log.
const Name = "audit-runs"

// ReadModel is the audit projection and its queries, bound to one
// database. Run it with a projections.Projector over the same DB.
//
// # Layout
//
// A row per record with four indexes cost more than the rest of the audit
// trail together (about 20 µs per record on SQLite), so the read model
// indexes runs instead: one row per audit.sealed event (its position in
// the log, its seq range and time range) and one key row per distinct
// actor (user id and access key), action, entity type, entity id and
// outcome in the run. Under load a run holds an interval's records,
// mostly of the same few users and routes, so a record costs a share of
// one row. A query finds the runs that can hold matches through the keys
// (the first filter set drives, the others are checked per run), reads
// them from the event store (the audit stream is the evidence: the
// records come back exactly as stored), decodes them (domain.DecodeEvent)
// and filters their records.
type ReadModel struct {
	db  *projections.DB
	log Log
	sql statements
}

// Log is what queries need of the event store: the audit.sealed event at
// a position (every eventstore.Store is one).
type Log interface {
	ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error)
}

var _ projections.Projection = (*ReadModel)(nil)

// New returns the read model on db, reading runs from log.
func New(db *projections.DB, log Log) *ReadModel {
	return &ReadModel{db: db, log: log, sql: newStatements(db)}
}

// Name implements projections.Projection.
func (*ReadModel) Name() string { return Name }

// EventTypes implements projections.Projection: the sealed runs, and the
// creations that say which domain a user, a keypair, a session, a folder
// or a token belongs to (domains.go).
func (*ReadModel) EventTypes() []string {
	return []string{domain.TypeAuditSealed, domain.TypeUserCreated, domain.TypeKeypairIssued,
		domain.TypeSessionRequested, domain.TypeVFolderCreated, domain.TypeTokenIssued}
}

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string {
	return []string{"audit_runs", "audit_keys", "audit_domains", "audit_owners"}
}

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// migrations are the DDL per dialect. Append-only. Runs never overlap, so
// last_seq orders them as first_seq does. audit_domains holds, per run and
// per domain, the seqs of the run's records that concern the domain
// (encodeSeqs); audit_owners the domain of every user, keypair, session,
// folder and token, as their creations said. Both came after audit_runs:
// records sealed before they existed concern no domain until the read
// model is rebuilt.
var migrations = map[projections.Dialect][]string{
	projections.SQLite: {
		`CREATE TABLE {schema}.audit_runs (
    last_seq  INTEGER PRIMARY KEY,
    first_seq INTEGER NOT NULL,
    min_at    INTEGER NOT NULL,
    max_at    INTEGER NOT NULL,
    position  INTEGER NOT NULL
) STRICT`,
		`CREATE TABLE {schema}.audit_keys (
    field    TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (field, value, last_seq)
) STRICT, WITHOUT ROWID`,
		`CREATE TABLE {schema}.audit_domains (
    domain   TEXT    NOT NULL,
    last_seq INTEGER NOT NULL,
    seqs     TEXT    NOT NULL,
    PRIMARY KEY (domain, last_seq)
) STRICT, WITHOUT ROWID`,
		`CREATE TABLE {schema}.audit_owners (
    kind   TEXT NOT NULL,
    id     TEXT NOT NULL,
    domain TEXT NOT NULL,
    PRIMARY KEY (kind, id)
) STRICT, WITHOUT ROWID`,
		// Records name objects by id alone (lookupOwners): without this
		// index every projected run scanned the whole table.
		`CREATE INDEX audit_owners_id_idx ON {schema}.audit_owners (id)`,
	},
	projections.Postgres: {
		`CREATE TABLE {schema}.audit_runs (
    last_seq  bigint      PRIMARY KEY,
    first_seq bigint      NOT NULL,
    min_at    timestamptz NOT NULL,
    max_at    timestamptz NOT NULL,
    position  bigint      NOT NULL
)`,
		`CREATE TABLE {schema}.audit_keys (
    field    text   NOT NULL,
    value    text   NOT NULL,
    last_seq bigint NOT NULL,
    PRIMARY KEY (field, value, last_seq)
)`,
		`CREATE TABLE {schema}.audit_domains (
    domain   text   NOT NULL,
    last_seq bigint NOT NULL,
    seqs     text   NOT NULL,
    PRIMARY KEY (domain, last_seq)
)`,
		`CREATE TABLE {schema}.audit_owners (
    kind   text NOT NULL,
    id     text NOT NULL,
    domain text NOT NULL,
    PRIMARY KEY (kind, id)
)`,
		`CREATE INDEX audit_owners_id_idx ON {schema}.audit_owners (id)`,
	},
}

// Key fields of audit_keys. A record's user id and access key are both
// keys of the field actor.
const (
	keyActor      = "actor"
	keyAction     = "action"
	keyEntityType = "entity_type"
	keyEntityID   = "entity_id"
	keyOutcome    = "outcome"
)

type statements struct {
	insertRun    string
	insertKey    string
	insertDomain string
	insertOwner  string
}

func newStatements(db *projections.DB) statements {
	return statements{
		insertRun: db.SQL(`INSERT INTO {schema}.audit_runs (last_seq, first_seq, min_at, max_at, position)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (last_seq) DO NOTHING`),
		insertKey: db.SQL(`INSERT INTO {schema}.audit_keys (field, value, last_seq) VALUES ($1, $2, $3)
ON CONFLICT (field, value, last_seq) DO NOTHING`),
		insertDomain: db.SQL(`INSERT INTO {schema}.audit_domains (domain, last_seq, seqs) VALUES ($1, $2, $3)
ON CONFLICT (domain, last_seq) DO NOTHING`),
		insertOwner: db.SQL(`INSERT INTO {schema}.audit_owners (kind, id, domain) VALUES ($1, $2, $3)
ON CONFLICT (kind, id) DO NOTHING`),
	}
}
