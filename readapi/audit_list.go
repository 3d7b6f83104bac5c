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

// auditScope is the part of the audit trail a caller reads: all of it
// (Domain empty: superadmins and auditors) or the records that concern
// one domain (domain auditors: their own).
type auditScope struct{ Domain string }

// mayAudit says what of the audit trail the caller reads: superadmins and
// auditors all of it, domain auditors their domain's records; domain
// admins, users and monitors nothing (the records span every tenant).
func mayAudit(who caller, op string) (auditScope, error) {
	switch domain.Role(who.Role) {
	case domain.RoleSuperadmin, domain.RoleAuditor:
		return auditScope{}, nil
	case domain.RoleDomainAuditor:
		return auditScope{Domain: who.Domain}, nil
	}
	return auditScope{}, domain.Errorf(op, domain.KindForbidden, "reading the audit trail needs the superadmin, auditor or domain-auditor role")
}

// MayVerifyAudit lets the callers who read the audit trail (superadmins
// and both auditors) start and read its verifications: a verification
// tells the chain's head or its first broken seq, no record's content.
func MayVerifyAudit(c *fiber.Ctx, op string) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	_, err = mayAudit(who, op)
	return err
}

// listAudit handles GET /v1/audit?actor=&action=&entity_type=&entity_id=&outcome=&from=&to=&limit=&cursor=.
// A domain auditor's pages hold only its domain's records.
func (a *api) listAudit(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	scope, err := mayAudit(who, opListAudit)
	if err != nil {
		return err
	}
	f, err := auditFilter(c, opListAudit)
	if err != nil {
		return err
	}
	f.Domain = scope.Domain
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
// per record. For a domain auditor, the NDJSON holds every record after
// the cursor: those of its domain that match the filters in full, each
// other one elided (audit.Elided); the CSV only the former.
func (a *api) streamAudit(c *fiber.Ctx) error {
	const op = "audit.stream"
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	scope, err := mayAudit(who, op)
	if err != nil {
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
	// A domain auditor's NDJSON holds every record after the cursor, the
	// others' elided, so that it verifies as a chain; its CSV, for
	// spreadsheets, only its domain's records.
	f.Domain, f.Elide = scope.Domain, scope.Domain != "" && format == "ndjson"
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
