package audit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
)

// Page sizes of List.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Filter selects records. Empty fields select everything.
type Filter struct {
	// Actor is a user id or an access key.
	Actor      string
	Action     string
	EntityType string
	EntityID   string
	Outcome    audit.Outcome
	// From and To bound the records' time: From <= time < To.
	From, To time.Time
	// After is the seq to read after (a page's Next).
	After uint64
	// Limit is the page size (DefaultLimit when 0, at most MaxLimit).
	Limit int
}

// Entry is one record as stored: Raw is its JSON byte for byte (what an
// export writes, so it verifies offline).
type Entry struct {
	Record audit.Record
	Raw    json.RawMessage
}

// Page is one page of records, in seq order.
type Page struct {
	Records []Entry
	// Next is the After of the next page; 0 on the last page.
	Next uint64
}

// List returns the records matching f, in seq order, one page.
func (m *ReadModel) List(ctx context.Context, f Filter) (Page, error) {
	const op = "audit.list"
	switch {
	case f.Limit < 0 || f.Limit > MaxLimit:
		return Page{}, domain.Invalid(op, "limit", "must be between 1 and %d", MaxLimit)
	case f.Outcome != "" && f.Outcome != audit.Success && f.Outcome != audit.Failure && f.Outcome != audit.Denied:
		return Page{}, domain.Invalid(op, "outcome", "%q is not success, error or denied", f.Outcome)
	case !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To):
		return Page{}, domain.Invalid(op, "to", "must be after from")
	}
	if f.Limit == 0 {
		f.Limit = DefaultLimit
	}
	d := m.db.Dialect()
	rows, err := m.db.Query(ctx, m.sql.list, int64(f.After), f.Actor, f.Action, f.EntityType, f.EntityID, string(f.Outcome),
		d.Time(f.From), d.Time(f.To), f.Limit)
	if err != nil {
		return Page{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	page := Page{Records: []Entry{}}
	for rows.Next() {
		var seq int64
		var raw string
		if err := rows.Scan(&seq, &raw); err != nil {
			rows.Close()
			return Page{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
		}
		var rec domain.SealedRecord
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			rows.Close()
			return Page{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
		}
		page.Records = append(page.Records, Entry{Record: rec.Record, Raw: json.RawMessage(raw)})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return Page{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	if len(page.Records) == f.Limit {
		page.Next = page.Records[len(page.Records)-1].Record.Seq
	}
	return page, nil
}
