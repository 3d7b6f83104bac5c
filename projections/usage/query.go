package usage

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// GroupBy is what a usage row is about.
type GroupBy string

// The groupings: one row per day and user (with the user's domain), per
// day and project (with its domain), or per day and domain.
const (
	ByUser    GroupBy = "user"
	ByProject GroupBy = "project"
	ByDomain  GroupBy = "domain"
)

// MaxDays bounds the days one query covers.
const MaxDays = 366

// keyColumns are the columns that name a row's subject, per grouping.
var keyColumns = map[GroupBy][]string{
	ByUser:    {"user_id", "domain"},
	ByProject: {"domain", "project"},
	ByDomain:  {"domain"},
}

// Query selects usage: days From to To (UTC dates, both included, at most
// MaxDays), grouped by GroupBy, optionally of one user, one project (of
// Domain) or one domain. Now is the end of the spans still allocated.
type Query struct {
	GroupBy  GroupBy
	From, To string
	UserID   string
	Domain   string
	Project  string
	Now      time.Time
}

// Row is the usage of one subject on one day. Only the fields of the
// query's grouping are set among UserID, Email, Username, Domain and
// Project.
type Row struct {
	Day      string
	UserID   string
	Email    string
	Username string
	Domain   string
	Project  string
	// Sessions is the number of sessions that started (were scheduled)
	// that day.
	Sessions int64
	// KernelMillis is the time the subject's kernels held allocations
	// that day, summed over kernels.
	KernelMillis float64
	// SlotMillis is, per slot, the amount held times the milliseconds it
	// was held, in Quantity units (thousandths of a unit, of a byte for
	// memory).
	SlotMillis map[domain.SlotName]float64
}

const millisPerHour = float64(time.Hour / time.Millisecond)

// Hours returns the usage of slot in unit-hours: core-hours for cpu,
// device-hours for GPUs, share-hours for GPU shares, GiB-hours for
// memory slots.
func (r Row) Hours(slot domain.SlotName) float64 {
	h := r.SlotMillis[slot] / domain.QuantityScale / millisPerHour
	if t, ok := domain.SlotTypeOf(slot); ok && t == domain.SlotBytes {
		h /= 1 << 30
	}
	return h
}

// KernelHours returns KernelMillis in hours.
func (r Row) KernelHours() float64 { return r.KernelMillis / millisPerHour }

// Days parses and checks a query's range: from and to as UTC dates, from
// not after to, at most MaxDays days. Errors name the parameter.
func Days(op, from, to string) (time.Time, time.Time, error) {
	f, err := time.Parse(DayLayout, from)
	if err != nil {
		return time.Time{}, time.Time{}, domain.Invalid(op, "from", "must be a date YYYY-MM-DD, not %q", from)
	}
	t, err := time.Parse(DayLayout, to)
	if err != nil {
		return time.Time{}, time.Time{}, domain.Invalid(op, "to", "must be a date YYYY-MM-DD, not %q", to)
	}
	if t.Before(f) {
		return time.Time{}, time.Time{}, domain.Invalid(op, "from", "%s is after to %s", from, to)
	}
	if days := int(t.Sub(f)/(24*time.Hour)) + 1; days > MaxDays {
		return time.Time{}, time.Time{}, domain.Invalid(op, "to", "the range covers %d days; at most %d per request", days, MaxDays)
	}
	return f, t, nil
}

// Usage answers q in three statements whatever the store holds: the
// released kernels' days, the sessions started, and the kernels still
// allocated (split up to q.Now). Rows are ordered by day, then subject;
// a subject without usage or sessions on a day has no row that day.
func (m *ReadModel) Usage(ctx context.Context, q Query) ([]Row, error) {
	const op = "usage.query"
	if _, ok := keyColumns[q.GroupBy]; !ok {
		return nil, domain.Invalid(op, "group_by", "must be user, project or domain, not %q", q.GroupBy)
	}
	_, to, err := Days(op, q.From, q.To)
	if err != nil {
		return nil, err
	}
	if q.Project != "" && q.Domain == "" {
		return nil, domain.Invalid(op, "domain", "a project is named within its domain")
	}
	rows := rowSet{group: q.GroupBy, byKey: map[string]*Row{}}
	closed, started, open := statementsOf(q, to.AddDate(0, 0, 1))
	if err := m.scan(ctx, op, closed, func(r projections.Rows) error {
		var day, slot string
		var v float64
		k, dest := rows.dest(&day)
		if err := r.Scan(append(dest, &slot, &v)...); err != nil {
			return err
		}
		rows.addSlot(day, k, slot, v)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := m.scan(ctx, op, started, func(r projections.Rows) error {
		var day string
		var n int64
		k, dest := rows.dest(&day)
		if err := r.Scan(append(dest, &n)...); err != nil {
			return err
		}
		rows.row(day, k).Sessions += n
		return nil
	}); err != nil {
		return nil, err
	}
	now := q.Now.UTC()
	if err := m.scan(ctx, op, open, func(r projections.Rows) error {
		var slot string
		var allocated, amount int64
		k, dest := rows.dest(nil)
		if err := r.Scan(append(append([]any{&allocated}, dest...), &slot, &amount)...); err != nil {
			return err
		}
		for _, p := range splitDays(time.UnixMilli(allocated), now) {
			if p.day >= q.From && p.day <= q.To {
				rows.addSlot(p.day, k, slot, float64(p.millis)*float64(amount))
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return rows.sorted(), nil
}

// statement is a query and its arguments.
type statement struct {
	sql  string
	args []any
}

// statementsOf builds the three statements of q; end is the first
// instant after its last day.
func statementsOf(q Query, end time.Time) (closed, started, open statement) {
	// Released kernels: the slot sums, and the kernel time as slot "".
	where, args := filter("d.", q, "d.day >= $1 AND d.day <= $2", q.From, q.To)
	sel, group := selectKeys("d.", q.GroupBy)
	closed = statement{`SELECT d.day, ` + sel + `, s.slot, SUM(CAST(d.millis AS DOUBLE PRECISION) * s.amount)
  FROM {schema}.usage_days d
  JOIN {schema}.usage_kernel_slots s ON s.kernel_id = d.kernel_id` + join("d.", q.GroupBy) + `
 WHERE ` + where + `
 GROUP BY d.day, ` + group + `, s.slot
UNION ALL
SELECT d.day, ` + sel + `, '', CAST(SUM(d.millis) AS DOUBLE PRECISION)
  FROM {schema}.usage_days d` + join("d.", q.GroupBy) + `
 WHERE ` + where + `
 GROUP BY d.day, ` + group, args}

	// Sessions started.
	where, args = filter("x.", q, "x.started_day >= $1 AND x.started_day <= $2", q.From, q.To)
	sel, group = selectKeys("x.", q.GroupBy)
	started = statement{`SELECT x.started_day, ` + sel + `, COUNT(*)
  FROM {schema}.usage_sessions x` + join("x.", q.GroupBy) + `
 WHERE ` + where + `
 GROUP BY x.started_day, ` + group, args}

	// Kernels still allocated, split up to now by the caller: one row per
	// kernel and slot, and one per kernel with slot "" and amount 1 for
	// its time.
	where, args = filter("k.", q, "k.released_ms IS NULL AND k.allocated_ms < $1", end.UnixMilli())
	sel, _ = selectKeys("k.", q.GroupBy)
	open = statement{`SELECT k.allocated_ms, ` + sel + `, s.slot, s.amount
  FROM {schema}.usage_kernels k
  JOIN {schema}.usage_kernel_slots s ON s.kernel_id = k.kernel_id` + join("k.", q.GroupBy) + `
 WHERE ` + where + `
UNION ALL
SELECT k.allocated_ms, ` + sel + `, '', 1
  FROM {schema}.usage_kernels k` + join("k.", q.GroupBy) + `
 WHERE ` + where, args}
	return closed, started, open
}

// filter returns the WHERE clause of a query: base (with its args as $1,
// ...) and the query's subject filters on the columns of prefix.
func filter(prefix string, q Query, base string, args ...any) (string, []any) {
	conds := []string{base}
	add := func(col, v string) {
		if v != "" {
			args = append(args, v)
			conds = append(conds, prefix+col+" = $"+strconv.Itoa(len(args)))
		}
	}
	add("user_id", q.UserID)
	add("domain", q.Domain)
	add("project", q.Project)
	return strings.Join(conds, " AND "), args
}

// selectKeys returns the selected key columns of a grouping (with the
// user's names for ByUser) and the GROUP BY list.
func selectKeys(prefix string, g GroupBy) (string, string) {
	cols := make([]string, len(keyColumns[g]))
	for i, c := range keyColumns[g] {
		cols[i] = prefix + c
	}
	group := strings.Join(cols, ", ")
	if g == ByUser {
		return group + ", COALESCE(u.email, ''), COALESCE(u.username, '')", group + ", u.email, u.username"
	}
	return group, group
}

// join brings the users' names to a ByUser query.
func join(prefix string, g GroupBy) string {
	if g != ByUser {
		return ""
	}
	return "\n  LEFT JOIN {schema}.usage_users u ON u.user_id = " + prefix + "user_id"
}

// scan runs one query and hands each row to each.
func (m *ReadModel) scan(ctx context.Context, op string, st statement, each func(projections.Rows) error) error {
	rows, err := m.db.Query(ctx, m.db.SQL(st.sql), st.args...)
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	for rows.Next() {
		if err := each(rows); err != nil {
			return &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return nil
}

// rowSet merges the three queries' rows by day and subject.
type rowSet struct {
	group GroupBy
	byKey map[string]*Row
}

// subject is a row's key columns as scanned.
type subject struct{ a, b, email, username string }

// dest returns the scan destinations of the day (when day is not nil)
// and the grouping's key columns.
func (s *rowSet) dest(day *string) (*subject, []any) {
	k := &subject{}
	var out []any
	if day != nil {
		out = append(out, day)
	}
	switch s.group {
	case ByUser:
		out = append(out, &k.a, &k.b, &k.email, &k.username)
	case ByProject:
		out = append(out, &k.a, &k.b)
	default:
		out = append(out, &k.a)
	}
	return k, out
}

func (s *rowSet) row(day string, k *subject) *Row {
	key := day + "\x00" + k.a + "\x00" + k.b
	r, ok := s.byKey[key]
	if !ok {
		r = &Row{Day: day}
		switch s.group {
		case ByUser:
			r.UserID, r.Domain, r.Email, r.Username = k.a, k.b, k.email, k.username
		case ByProject:
			r.Domain, r.Project = k.a, k.b
		default:
			r.Domain = k.a
		}
		s.byKey[key] = r
	}
	return r
}

// addSlot adds v to the slot's sum, or to the kernel time for slot "".
func (s *rowSet) addSlot(day string, k *subject, slot string, v float64) {
	r := s.row(day, k)
	if slot == "" {
		r.KernelMillis += v
		return
	}
	if r.SlotMillis == nil {
		r.SlotMillis = map[domain.SlotName]float64{}
	}
	r.SlotMillis[domain.SlotName(slot)] += v
}

func (s *rowSet) sorted() []Row {
	out := make([]Row, 0, len(s.byKey))
	for _, r := range s.byKey {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Project, b.Project),
			cmp.Compare(a.Email, b.Email), cmp.Compare(a.UserID, b.UserID))
	})
	return out
}
