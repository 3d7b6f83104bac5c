package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/sessions"
)

const opListSessions = "session.list"

// listSessionsResponse is the answer of GET /v1/sessions: a page of
// sessions, newest first. NextCursor is null on the last page.
type listSessionsResponse struct {
	Items      []sessionView `json:"items"`
	NextCursor *string       `json:"next_cursor"`
}

// listSessions handles GET /v1/sessions?status=&q=&limit=&cursor=.
// status takes one status or several separated by commas; q finds a
// session by its id or by the start of its name (ignoring case). Callers
// that may not see every session see their domain's (admins, monitors) or
// their own.
func (a *api) listSessions(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	limit, err := QueryInt(c, opListSessions, "limit", 0, 1, sessions.MaxListLimit)
	if err != nil {
		return err
	}
	f := sessions.Filter{Limit: limit, Cursor: strings.Clone(c.Query("cursor")), Search: strings.Clone(strings.TrimSpace(c.Query("q")))}
	if raw := c.Query("status"); raw != "" {
		for _, s := range strings.Split(raw, ",") {
			f.Statuses = append(f.Statuses, domain.SessionStatus(strings.ToUpper(strings.TrimSpace(s))))
		}
	}
	switch {
	case who.IsSuperadmin():
	case who.ReadsDomain(who.Domain):
		f.Domain = who.Domain
	default:
		f.Owner = who.UserID
	}
	if err := a.WaitForPosition(c, opListSessions); err != nil {
		return err
	}
	page, err := a.Sessions.ListSessions(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := listSessionsResponse{Items: make([]sessionView, len(page.Sessions))}
	for i, s := range page.Sessions {
		out.Items[i] = viewSession(s)
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return c.JSON(out)
}
