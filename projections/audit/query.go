package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/projections"
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
	// Domain, when set, selects the records that concern this domain:
	// their actor's or their entity's (see domains.go).
	Domain string
	// Elide, with Domain, returns every record after After: those Domain
	// and the other filters select in full, each other one elided (its
	// place in the chain only, Entry.Elided), so that the records read
	// still verify as a chain. Without Elide the others are left out.
	Elide bool
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
	// Elided: the reader may not see this record (Filter.Elide). Raw is
	// then its elided form (audit.AppendElidedJSON) and Record holds only
	// its seq, prev_hash and hash.
	Elided bool
}

// Page is one page of records, in seq order.
type Page struct {
	Records []Entry
	// Next is the After of the next page; 0 on the last page.
	Next uint64
}

// runsPerQuery is how many candidate runs List reads at a time.
const runsPerQuery = 16

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
	case f.Elide && f.Domain == "":
		return Page{}, domain.Invalid(op, "domain", "is required to elide the other domains' records")
	}
	if f.Limit == 0 {
		f.Limit = DefaultLimit
	}
	page := Page{Records: []Entry{}}
	for after := f.After; ; {
		query, args := m.runsQuery(f, after)
		runs, err := projections.QueryList(ctx, m.db, op, scanRun, query, args...)
		if err != nil {
			return Page{}, err
		}
		for _, run := range runs {
			sealed, err := m.readRun(ctx, run)
			if err != nil {
				return Page{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf("run ending at seq %d", run.lastSeq), Err: err}
			}
			inDomain, err := decodeSeqs(run.seqs)
			if err != nil {
				return Page{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
			}
			for _, rec := range sealed.Records {
				if rec.Seq <= f.After {
					continue
				}
				e := Entry{Record: rec.Record, Raw: rec.Raw}
				if (f.Domain != "" && !inDomain.has(rec.Seq)) || !f.matches(rec.Record) {
					if !f.Elide {
						continue
					}
					elided := rec.Elide()
					e = Entry{Record: audit.Record{Seq: elided.Seq, PrevHash: elided.PrevHash, Hash: elided.Hash},
						Raw: audit.AppendElidedJSON(nil, elided), Elided: true}
				}
				page.Records = append(page.Records, e)
				if len(page.Records) == f.Limit {
					page.Next = rec.Seq
					return page, nil
				}
			}
			after = run.lastSeq
		}
		if len(runs) < runsPerQuery {
			return page, nil
		}
	}
}

// matches applies the filters to one record.
func (f Filter) matches(r audit.Record) bool {
	return (f.Actor == "" || r.UserID == f.Actor || r.AccessKey == f.Actor) &&
		(f.Action == "" || r.Action == f.Action) &&
		(f.EntityType == "" || r.EntityType == f.EntityType) &&
		(f.EntityID == "" || r.EntityID == f.EntityID) &&
		(f.Outcome == "" || r.Outcome == f.Outcome) &&
		(f.From.IsZero() || !r.Time.Before(f.From)) &&
		(f.To.IsZero() || r.Time.Before(f.To))
}

type run struct {
	lastSeq  uint64
	position uint64
	seqs     string // the seqs of Filter.Domain's records in the run (encodeSeqs), with a Domain
}

func scanRun(row projections.Row) (run, error) {
	var last, position int64
	var seqs string
	err := row.Scan(&last, &position, &seqs)
	return run{lastSeq: uint64(last), position: uint64(position), seqs: seqs}, err
}

// readRun reads a run's audit.sealed event from the log (no records when
// it was pruned).
func (m *ReadModel) readRun(ctx context.Context, r run) (domain.AuditSealed, error) {
	evs, err := m.log.ReadAll(ctx, r.position-1, 1)
	if err != nil {
		return domain.AuditSealed{}, err
	}
	if len(evs) == 1 && evs[0].Position == r.position && evs[0].Type == domain.TypeAuditPruned {
		// Archived and pruned since it was projected: its records are no
		// longer the live trail's.
		return domain.AuditSealed{}, nil
	}
	if len(evs) != 1 || evs[0].Position != r.position || evs[0].Type != domain.TypeAuditSealed {
		return domain.AuditSealed{}, fmt.Errorf("the log holds no audit.sealed event at position %d", r.position)
	}
	ev, err := domain.DecodeEvent(evs[0].Type, evs[0].Version, evs[0].Data)
	if err != nil {
		return domain.AuditSealed{}, err
	}
	return ev.(domain.AuditSealed), nil
}

// runsQuery selects the next runs after seq after that can hold records
// matching f: the first key filter set drives (a range of audit_keys'
// primary key), the others must be keys of the run too, and the run's
// time range must meet the filter's. The SQL is built from fixed parts;
// every value is a parameter.
func (m *ReadModel) runsQuery(f Filter, after uint64) (string, []any) {
	keys := []struct{ field, value string }{
		{keyActor, f.Actor}, {keyAction, f.Action}, {keyEntityType, f.EntityType}, {keyEntityID, f.EntityID}, {keyOutcome, string(f.Outcome)},
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var q strings.Builder
	driven := false
	switch {
	case f.Elide:
		// Every run: the records the filters leave out are elided, not
		// skipped.
		q.WriteString("SELECT r.last_seq, r.position, COALESCE(d.seqs, '') FROM {schema}.audit_runs r LEFT JOIN {schema}.audit_domains d" +
			" ON d.last_seq = r.last_seq AND d.domain = " + arg(f.Domain) + " WHERE r.last_seq > " + arg(int64(after)) +
			" ORDER BY r.last_seq LIMIT " + arg(runsPerQuery))
		return m.db.SQL(q.String()), args
	case f.Domain != "":
		// The domain drives: the runs holding records that concern it.
		driven = true
		q.WriteString("SELECT r.last_seq, r.position, d.seqs FROM {schema}.audit_domains d JOIN {schema}.audit_runs r ON r.last_seq = d.last_seq")
		q.WriteString(" WHERE d.domain = " + arg(f.Domain) + " AND d.last_seq > " + arg(int64(after)))
	}
	for _, k := range keys {
		if k.value == "" {
			continue
		}
		if !driven {
			driven = true
			q.WriteString("SELECT r.last_seq, r.position, '' FROM {schema}.audit_keys d JOIN {schema}.audit_runs r ON r.last_seq = d.last_seq")
			q.WriteString(" WHERE d.field = " + arg(k.field) + " AND d.value = " + arg(k.value) + " AND d.last_seq > " + arg(int64(after)))
			continue
		}
		q.WriteString(" AND EXISTS (SELECT 1 FROM {schema}.audit_keys k WHERE k.field = " + arg(k.field) +
			" AND k.value = " + arg(k.value) + " AND k.last_seq = r.last_seq)")
	}
	if !driven {
		q.WriteString("SELECT r.last_seq, r.position, '' FROM {schema}.audit_runs r WHERE r.last_seq > " + arg(int64(after)))
	}
	d := m.db.Dialect()
	if !f.From.IsZero() {
		q.WriteString(" AND r.max_at >= " + arg(d.Time(f.From)))
	}
	if !f.To.IsZero() {
		q.WriteString(" AND r.min_at < " + arg(d.Time(f.To)))
	}
	q.WriteString(" ORDER BY r.last_seq LIMIT " + arg(runsPerQuery))
	return m.db.SQL(q.String()), args
}
