package sessions

import (
	"context"
	"fmt"
	"github.com/google/uuid"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// Listing limits.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// statuses are the statuses a filter may name.
var statuses = []domain.SessionStatus{
	domain.StatusPending, domain.StatusScheduled, domain.StatusPreparing, domain.StatusPulling,
	domain.StatusPrepared, domain.StatusCreating, domain.StatusRunning, domain.StatusDisconnected, domain.StatusTerminating,
	domain.StatusTerminated, domain.StatusCancelled, domain.StatusError,
}

// Filter selects the sessions ListSessions returns. Zero fields select
// everything.
type Filter struct {
	// Owner is the owner's user id.
	Owner string
	// AccessKey is the access key the sessions were requested with.
	AccessKey string
	// Domain keeps the sessions of one domain.
	Domain string
	// Statuses keeps the sessions in any of these statuses.
	Statuses []domain.SessionStatus
	// Search keeps the session whose id it is (a UUID), or else the
	// sessions whose name starts with it, ignoring case (names are ASCII:
	// the same on both backends).
	Search string
	// Limit is the page size: 0 means DefaultListLimit, at most
	// MaxListLimit.
	Limit int
	// Cursor is a Page's NextCursor, to read the page after it.
	Cursor string
}

// Page is one page of sessions, newest first.
type Page struct {
	Sessions []Session `json:"sessions"`
	// NextCursor reads the next page; empty on the last one. It is opaque.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListSessions returns the sessions matching f, newest (last requested)
// first, with their kernels, one page at a time. A bad filter is a
// KindInvalid error naming the field.
func (m *ReadModel) ListSessions(ctx context.Context, f Filter) (Page, error) {
	const op = "sessions.list"
	limit := f.Limit
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return Page{}, domain.Invalid(op, "limit", "must be between 1 and %d, not %d", MaxListLimit, f.Limit)
	}
	var (
		conds []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Owner != "" {
		conds = append(conds, "owner_user_id = "+arg(f.Owner))
	}
	if f.AccessKey != "" {
		conds = append(conds, "owner_access_key = "+arg(f.AccessKey))
	}
	if f.Domain != "" {
		conds = append(conds, "domain = "+arg(f.Domain))
	}
	if len(f.Statuses) > 0 {
		ph := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			if !slices.Contains(statuses, s) {
				return Page{}, domain.Invalid(op, "status", "unknown session status %q", s)
			}
			ph[i] = arg(string(s))
		}
		conds = append(conds, "status IN ("+strings.Join(ph, ", ")+")")
	}
	if f.Search != "" {
		if id, err := uuid.Parse(f.Search); err == nil {
			conds = append(conds, "id = "+arg(id.String()))
		} else {
			conds = append(conds, "lower(name) LIKE "+arg(likePrefix(strings.ToLower(f.Search)))+` ESCAPE '\'`)
		}
	}
	if f.Cursor != "" {
		before, err := strconv.ParseUint(f.Cursor, 10, 63)
		if err != nil || before == 0 {
			return Page{}, domain.Invalid(op, "cursor", "not a cursor this API returned")
		}
		conds = append(conds, "created_position < "+arg(int64(before)))
	}
	if len(conds) == 0 {
		conds = append(conds, "1 = 1")
	}
	// One row more than the page tells whether there is a next page.
	limitArg := arg(limit + 1)
	query := fmt.Sprintf(m.sql.listSessionsFmt, strings.Join(conds, " AND "), limitArg)
	rows, err := m.db.Query(ctx, query, args...)
	if err != nil {
		return Page{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	sessions, err := scanSessions(rows)
	if err != nil {
		return Page{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	page := Page{Sessions: sessions}
	if len(sessions) > limit {
		page.Sessions = sessions[:limit]
		page.NextCursor = strconv.FormatUint(sessions[limit-1].createdPosition, 10)
	}
	if page.Sessions == nil {
		page.Sessions = []Session{}
	}
	return page, nil
}

// likePrefix is a LIKE pattern matching the strings that start with p:
// p's own % and _ (and the escape character) match only themselves.
func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
	return r.Replace(p) + "%"
}
