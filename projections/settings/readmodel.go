package settings

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Name is the projection's name (its checkpoint's).
const Name = "settings"

// ReadModel is the settings projection and its queries, bound to one
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
func (*ReadModel) EventTypes() []string { return []string{domain.TypeSettingChanged} }

// Tables implements projections.Projection.
func (*ReadModel) Tables() []string { return append([]string(nil), tables...) }

// Migrations implements projections.Projection.
func (*ReadModel) Migrations(d projections.Dialect) []string { return migrations[d] }

// Apply implements projections.Projection: one row per change, keyed by
// its log position (a replayed event changes nothing).
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	e, ok := ev.Payload.(domain.SettingChanged)
	if !ok {
		return fmt.Errorf("settings: unexpected event %s", ev.Type)
	}
	tx.Queue(m.sql.insert, int64(ev.Position), string(e.Key), e.Old, e.New, e.Actor, tx.Dialect().Time(e.At))
	return nil
}

// statements are the read model's SQL, rewritten for its database.
type statements struct {
	insert, current, value, history string
}

const columns = `c.position, c.setting, c.old_value, c.new_value, c.actor, c.changed_at`

func newStatements(db *projections.DB) statements {
	q := db.SQL
	return statements{
		insert: q(`INSERT INTO {schema}.setting_changes (position, setting, old_value, new_value, actor, changed_at)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (position) DO NOTHING`),
		current: q(`SELECT ` + columns + ` FROM {schema}.setting_changes c
 WHERE c.position = (SELECT MAX(l.position) FROM {schema}.setting_changes l WHERE l.setting = c.setting)
 ORDER BY c.setting`),
		value: q(`SELECT c.new_value FROM {schema}.setting_changes c WHERE c.setting = $1 ORDER BY c.position DESC LIMIT 1`),
		// $1: the key ('' for every key); $2: the position the page
		// starts before; $3: the page size.
		history: q(`SELECT ` + columns + ` FROM {schema}.setting_changes c
 WHERE ($1 = '' OR c.setting = $1) AND c.position < $2
 ORDER BY c.position DESC LIMIT $3`),
	}
}
