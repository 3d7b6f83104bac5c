package settings

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Change is one change of a setting, as its event recorded it.
type Change struct {
	Position uint64            `json:"position"`
	Key      domain.SettingKey `json:"key"`
	Old      string            `json:"old"`
	New      string            `json:"new"`
	Actor    string            `json:"actor"`
	At       time.Time         `json:"at"`
}

// MaxLimit bounds a page of the history.
const MaxLimit = 1000

// Page is one page of the history, newest first; Next is the cursor of
// the next page (0 on the last one).
type Page struct {
	Changes []Change
	Next    uint64
}

// Queries return KindUnavailable when the database fails and KindInternal
// for a row that does not decode. They do not authorize.

// Latest returns the newest change of every key that was ever set, by
// key: each key's current value and who set it when.
func (m *ReadModel) Latest(ctx context.Context) (map[domain.SettingKey]Change, error) {
	list, err := projections.QueryList(ctx, m.db, "settings.latest", scanChange, m.sql.current)
	if err != nil {
		return nil, err
	}
	out := make(map[domain.SettingKey]Change, len(list))
	for _, c := range list {
		out[c.Key] = c
	}
	return out, nil
}

// Value returns key's current value: the newest one set, else its
// default from defaults. It is one indexed read, cheap enough for every
// request that consults a setting.
func (m *ReadModel) Value(ctx context.Context, key domain.SettingKey, defaults domain.SettingDefaults) (string, error) {
	var v string
	err := m.db.QueryRow(ctx, m.sql.value, string(key)).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return defaults.Of(key), nil
	case err != nil:
		return "", &domain.Error{Op: "settings.value", Kind: domain.KindUnavailable, Err: err}
	}
	return v, nil
}

// History returns the changes of key (of every key when key is ""),
// newest first, limit per page (1 to MaxLimit), from the cursor before (0
// for the newest).
func (m *ReadModel) History(ctx context.Context, key domain.SettingKey, before uint64, limit int) (Page, error) {
	const op = "settings.history"
	if limit < 1 || limit > MaxLimit {
		return Page{}, domain.Invalid(op, "limit", "must be between 1 and %d", MaxLimit)
	}
	start := int64(math.MaxInt64)
	if before != 0 {
		start = int64(min(before, math.MaxInt64))
	}
	list, err := projections.QueryList(ctx, m.db, op, scanChange, m.sql.history, string(key), start, limit+1)
	if err != nil {
		return Page{}, err
	}
	p := Page{Changes: list}
	if len(list) > limit {
		p.Changes = list[:limit]
		p.Next = list[limit-1].Position
	}
	return p, nil
}

func scanChange(r projections.Row) (Change, error) {
	var (
		c   Change
		pos int64
		key string
		at  projections.NullTime
	)
	err := r.Scan(&pos, &key, &c.Old, &c.New, &c.Actor, &at)
	c.Position, c.Key, c.At = uint64(pos), domain.SettingKey(key), at.Time
	return c, err
}
