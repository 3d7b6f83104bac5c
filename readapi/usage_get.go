package readapi

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"math"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/usage"
)

const opUsage = "usage.get"

// defaultUsageDays is the range of a request without from: the 30 days
// that end with to.
const defaultUsageDays = 30

// usageResponse is the answer of GET /v1/usage.
type usageResponse struct {
	GroupBy string `json:"group_by"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Now is the time running kernels were counted up to.
	Now   time.Time  `json:"now"`
	Items []usageRow `json:"items"`
}

// usageRow is the usage of one subject on one UTC day. The subject's
// fields are those of the grouping: user_id, user_email, user_name and
// domain (user); domain and project (project); domain (domain).
type usageRow struct {
	Day       string `json:"day"`
	UserID    string `json:"user_id,omitempty"`
	UserEmail string `json:"user_email,omitempty"`
	UserName  string `json:"user_name,omitempty"`
	Domain    string `json:"domain"`
	Project   string `json:"project,omitempty"`
	// Sessions started (scheduled) that day.
	Sessions int64 `json:"sessions"`
	// RunningSeconds is the time the subject's kernels held their
	// allocations that day, summed over kernels.
	RunningSeconds float64 `json:"running_seconds"`
	CPUHours       float64 `json:"cpu_hours"`
	MemGiBHours    float64 `json:"mem_gib_hours"`
	// GPUHours are whole-device hours (cuda.device), GPUShareHours
	// fractional-share hours (cuda.shares).
	GPUHours      float64 `json:"gpu_hours"`
	GPUShareHours float64 `json:"gpu_share_hours"`
	// Slots has the unit-hours of every slot held (GiB-hours for bytes),
	// the four above included.
	Slots map[string]float64 `json:"slots"`
}

// getUsage handles GET /v1/usage?group_by=&from=&to=&user=&project=&domain=&format=.
// Superadmins see every domain's usage, admins and monitors their
// domain's, users their own (the rule of the session listing); a domain
// or user the caller may not see is 404, recorded as denied.
func (a *api) getUsage(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	format := cmp.Or(c.Query("format"), "json")
	if format != "json" && format != "csv" {
		return domain.Invalid(opUsage, "format", "must be json or csv, not %q", format)
	}
	now := a.Clock()
	q := usage.Query{
		GroupBy: usage.GroupBy(cmp.Or(c.Query("group_by"), string(usage.ByUser))),
		To:      cmp.Or(c.Query("to"), now.UTC().Format(usage.DayLayout)),
		Domain:  strings.Clone(c.Query("domain")),
		Project: strings.Clone(c.Query("project")),
		Now:     now,
	}
	q.From = c.Query("from")
	if q.From == "" {
		to, err := time.Parse(usage.DayLayout, q.To)
		if err != nil {
			return domain.Invalid(opUsage, "to", "must be a date YYYY-MM-DD, not %q", q.To)
		}
		q.From = to.AddDate(0, 0, 1-defaultUsageDays).Format(usage.DayLayout)
	}
	q.From, q.To = strings.Clone(q.From), strings.Clone(q.To)
	if raw := c.Query("user"); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil {
			return domain.Invalid(opUsage, "user", "must be a user id, not %q", raw)
		}
		q.UserID = id.String()
	}
	if err := a.usageScope(c, who, &q); err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opUsage); err != nil {
		return err
	}
	rows, err := a.Usage.Usage(c.UserContext(), q)
	if err != nil {
		return err
	}
	items := make([]usageRow, len(rows))
	for i, r := range rows {
		items[i] = viewUsage(r)
	}
	if format == "csv" {
		return usageCSV(c, q, items)
	}
	return c.JSON(usageResponse{GroupBy: string(q.GroupBy), From: q.From, To: q.To, Now: now.UTC(), Items: items})
}

// usageScope narrows q to what the caller may see.
func (a *api) usageScope(c *fiber.Ctx, who Caller, q *usage.Query) error {
	switch {
	case who.IsSuperadmin():
		if q.Project != "" && q.Domain == "" {
			q.Domain = who.Domain
		}
		return nil
	case q.Domain != "" && q.Domain != who.Domain:
		return Hidden(c, opUsage, "domain")
	}
	q.Domain = who.Domain
	if who.ReadsDomain(who.Domain) {
		if q.UserID == "" {
			return nil
		}
		return a.UserScope(c, who, opUsage, uuid.MustParse(q.UserID))
	}
	if q.UserID != "" && q.UserID != who.ID.String() {
		return Hidden(c, opUsage, "user")
	}
	q.UserID = who.ID.String()
	return nil
}

// hours rounds unit-hours to a millionth, so sums print without float
// noise.
func hours(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func viewUsage(r usage.Row) usageRow {
	v := usageRow{
		Day: r.Day, UserID: r.UserID, UserEmail: r.Email, UserName: r.Username, Domain: r.Domain, Project: r.Project,
		Sessions:       r.Sessions,
		RunningSeconds: math.Round(r.KernelMillis) / 1000,
		CPUHours:       hours(r.Hours(domain.SlotCPU)),
		MemGiBHours:    hours(r.Hours(domain.SlotMem)),
		GPUHours:       hours(r.Hours(domain.SlotCUDADevice)),
		GPUShareHours:  hours(r.Hours(domain.SlotCUDAShares)),
		Slots:          map[string]float64{},
	}
	for slot := range r.SlotMillis {
		v.Slots[string(slot)] = hours(r.Hours(slot))
	}
	return v
}

// usageCSV writes the rows as text/csv with a header row: the grouping's
// subject columns, the fixed figures, then one <slot>_hours column per
// other slot held in the range.
func usageCSV(c *fiber.Ctx, q usage.Query, items []usageRow) error {
	fixed := []string{"cpu", "mem", "cuda.device", "cuda.shares"}
	var extra []string
	for _, r := range items {
		for slot := range r.Slots {
			if !slices.Contains(fixed, slot) && !slices.Contains(extra, slot) {
				extra = append(extra, slot)
			}
		}
	}
	slices.Sort(extra)
	header := []string{"day"}
	switch q.GroupBy {
	case usage.ByUser:
		header = append(header, "user_id", "user_email", "user_name", "domain")
	case usage.ByProject:
		header = append(header, "domain", "project")
	default:
		header = append(header, "domain")
	}
	header = append(header, "sessions", "running_seconds", "cpu_hours", "mem_gib_hours", "gpu_hours", "gpu_share_hours")
	for _, s := range extra {
		header = append(header, s+"_hours")
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(header); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range items {
		rec := []string{r.Day}
		switch q.GroupBy {
		case usage.ByUser:
			rec = append(rec, r.UserID, cell(r.UserEmail), cell(r.UserName), cell(r.Domain))
		case usage.ByProject:
			rec = append(rec, cell(r.Domain), cell(r.Project))
		default:
			rec = append(rec, cell(r.Domain))
		}
		rec = append(rec, strconv.FormatInt(r.Sessions, 10), num(r.RunningSeconds), num(r.CPUHours), num(r.MemGiBHours), num(r.GPUHours), num(r.GPUShareHours))
		for _, s := range extra {
			rec = append(rec, num(r.Slots[s]))
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{
		"filename": "usage-" + string(q.GroupBy) + "-" + q.From + "-" + q.To + ".csv"}))
	return c.Send(buf.Bytes())
}

// cell keeps a name from being read as a formula by a spreadsheet (a
// username may start with "=", "+", "-" or "@"): such a cell is prefixed
// with a quote.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
