package readapi

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	auditrm "github.com/cairnhq/cairn/projections/audit"
)

const opListAudit = "audit.list"

// listAuditResponse is the answer of GET /v1/audit: records in seq order,
// each exactly as stored (so an export verifies offline). NextCursor is
// null on the last page.
type listAuditResponse struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}

// auditFilter reads the filters shared by the page and the stream:
// actor (user id or access key), action, entity_type, entity_id, outcome,
// from and to (RFC 3339), cursor.
func auditFilter(c *fiber.Ctx, op string) (auditrm.Filter, error) {
	f := auditrm.Filter{
		Actor: strings.Clone(c.Query("actor")), Action: strings.Clone(c.Query("action")),
		EntityType: strings.Clone(c.Query("entity_type")), EntityID: strings.Clone(c.Query("entity_id")),
		Outcome: audit.Outcome(strings.Clone(c.Query("outcome"))),
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if raw := c.Query(p.name); raw != "" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return f, domain.Invalid(op, p.name, "must be an RFC 3339 time, not %q", raw)
			}
			*p.dst = t
		}
	}
	if raw := c.Query("cursor"); raw != "" {
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return f, domain.Invalid(op, "cursor", "is not a cursor of this list")
		}
		f.After = n
	}
	return f, nil
}

// mayAudit lets superadmins read the audit trail (domain admins, users
// and monitors may not: the records span every tenant).
func mayAudit(who caller, op string) error {
	if who.Role != RoleSuperadmin {
		return domain.Errorf(op, domain.KindForbidden, "reading the audit trail needs the superadmin role")
	}
	return nil
}

// listAudit handles GET /v1/audit?actor=&action=&entity_type=&entity_id=&outcome=&from=&to=&limit=&cursor=.
func (a *api) listAudit(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	if err := mayAudit(who, opListAudit); err != nil {
		return err
	}
	f, err := auditFilter(c, opListAudit)
	if err != nil {
		return err
	}
	if f.Limit, err = QueryInt(c, opListAudit, "limit", 0, 1, auditrm.MaxLimit); err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opListAudit); err != nil {
		return err
	}
	page, err := a.Audit.List(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := listAuditResponse{Items: make([]json.RawMessage, len(page.Records))}
	for i, e := range page.Records {
		out.Items[i] = e.Raw
	}
	if page.Next != 0 {
		next := strconv.FormatUint(page.Next, 10)
		out.NextCursor = &next
	}
	return c.JSON(out)
}

// streamAudit handles GET /v1/audit/stream?format=ndjson|csv: every
// matching record, read page by page so memory stays flat however long the
// trail. ndjson (the default, application/x-ndjson) writes each record
// exactly as stored, so an export verifies offline; csv (text/csv, for
// spreadsheets) writes a header and one row of auditCSVHeader's columns
// per record.
func (a *api) streamAudit(c *fiber.Ctx) error {
	const op = "audit.stream"
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	if err := mayAudit(who, op); err != nil {
		return err
	}
	f, err := auditFilter(c, op)
	if err != nil {
		return err
	}
	format := c.Query("format", "ndjson")
	if format != "ndjson" && format != "csv" {
		return domain.Invalid(op, "format", "must be ndjson or csv, not %q", format)
	}
	if err := a.WaitForPosition(c, op); err != nil {
		return err
	}
	f.Limit = auditrm.MaxLimit
	ctx := c.UserContext()
	// The first page is read before answering, so an error is still a
	// problem+json; later errors end the stream early.
	page, err := a.Audit.List(ctx, f)
	if err != nil {
		return err
	}
	write := func(w *bufio.Writer, e auditrm.Entry) {
		w.Write(e.Raw)
		w.WriteByte('\n')
	}
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	var cw *csv.Writer
	if format == "csv" {
		c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="audit.csv"`)
		write = func(_ *bufio.Writer, e auditrm.Entry) { cw.Write(auditCSVRow(e.Record)) }
	}
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if format == "csv" {
			cw = csv.NewWriter(w)
			cw.Write(auditCSVHeader)
		}
		for {
			for _, e := range page.Records {
				write(w, e)
			}
			if cw != nil {
				cw.Flush()
			}
			if page.Next == 0 || w.Flush() != nil {
				w.Flush()
				return
			}
			f.After = page.Next
			if page, err = a.Audit.List(ctx, f); err != nil {
				return
			}
		}
	})
	return nil
}

// auditCSVHeader are the columns of the CSV export: every field of a
// record, named as in its JSON.
var auditCSVHeader = []string{"seq", "time", "user_id", "access_key", "acting_as", "action", "entity_type", "entity_id",
	"client_ip", "outcome", "status", "duration_ns", "request_id", "v", "prev_hash", "hash"}

// auditCSVRow is r as a row of auditCSVHeader's columns.
func auditCSVRow(r audit.Record) []string {
	return []string{strconv.FormatUint(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano), csvText(r.UserID), csvText(r.AccessKey),
		csvText(r.ActingAs), csvText(r.Action), csvText(r.EntityType), csvText(r.EntityID), csvText(r.ClientIP), string(r.Outcome),
		strconv.Itoa(r.Status), strconv.FormatInt(int64(r.Duration), 10), csvText(r.RequestID), strconv.Itoa(r.Version),
		r.PrevHash.String(), r.Hash.String()}
}

// csvText keeps a text cell that a spreadsheet would run as a formula
// (starting with =, +, -, @, a tab or a carriage return: a client may
// choose some of these values, a request id for one) as text, by a leading
// apostrophe. The NDJSON export keeps the records exactly as stored.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
