package readapi

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/projections/sessions"
)

const opSchedulerQueue = "scheduler.queue"

// Page sizes of GET /v1/scheduler/queue.
const (
	defaultQueueLimit = 50
	maxQueueLimit     = 500
)

// queueItem is one PENDING session in the scheduler's queue, with why it
// is not placed now (the explanation GET /v1/sessions/{id}/pending gives).
type queueItem struct {
	SessionID      uuid.UUID    `json:"session_id"`
	Name           string       `json:"name"`
	Owner          domain.Owner `json:"owner"`
	Domain         string       `json:"domain"`
	Project        string       `json:"project"`
	ResourceGroup  string       `json:"resource_group"`
	Priority       int          `json:"priority"`
	RequestedSlots domain.Slots `json:"requested_slots"`
	CreatedAt      time.Time    `json:"created_at"`
	// Position is the session's place in the whole queue (1 first); a
	// filtered page skips the places of sessions it leaves out.
	Position       int         `json:"position"`
	PlaceableNow   bool        `json:"placeable_now"`
	Reason         string      `json:"reason,omitempty"`
	Checks         []checkView `json:"checks"`
	EstimatedStart *time.Time  `json:"estimated_start"`
	Estimate       string      `json:"estimate,omitempty"`
}

// queuePage is the answer of GET /v1/scheduler/queue.
type queuePage struct {
	Items []queueItem `json:"items"`
	// Length is the number of PENDING sessions in the whole queue; Order
	// its order after priority.
	Length      int       `json:"length"`
	Order       string    `json:"order"`
	EvaluatedAt time.Time `json:"evaluated_at"`
	// NextCursor reads the next page (null on the last): the queue is
	// computed again, so a page continues after the position it ended at.
	NextCursor *string `json:"next_cursor"`
}

// schedulerQueue handles GET /v1/scheduler/queue?resource_group=&limit=&cursor=:
// the PENDING sessions in the order the scheduler considers them, each
// with its failed checks. Superadmins see every session, domain admins
// their domain's; others are refused.
func (a *api) schedulerQueue(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	if !who.IsSuperadmin() && who.Role != RoleAdmin {
		return domain.Errorf(opSchedulerQueue, domain.KindForbidden, "the scheduler's queue needs the superadmin or admin role")
	}
	limit, err := QueryInt(c, opSchedulerQueue, "limit", defaultQueueLimit, 1, maxQueueLimit)
	if err != nil {
		return err
	}
	after := 0
	if raw := c.Query("cursor"); raw != "" {
		if after, err = strconv.Atoi(raw); err != nil || after < 1 {
			return domain.Invalid(opSchedulerQueue, "cursor", "not a cursor this API returned")
		}
	}
	group := strings.Clone(c.Query("resource_group"))
	if err := a.WaitForPosition(c, opSchedulerQueue); err != nil {
		return err
	}
	r, err := a.simulate(c.UserContext())
	if err != nil {
		return err
	}
	out := queuePage{Items: []queueItem{}, Length: len(r.queue), Order: string(cmp.Or(r.in.Ungrouped.Order, placement.OrderFIFO)), EvaluatedAt: r.now}
	ordered := slices.Clone(r.queue)
	slices.SortFunc(ordered, func(x, y sessions.Queued) int { return r.rank[x.ID] - r.rank[y.ID] })
	for _, q := range ordered {
		pos := r.rank[q.ID]
		if pos <= after || (group != "" && q.ResourceGroup != group) || !who.ReadsDomain(q.Domain) {
			continue
		}
		if len(out.Items) == limit {
			next := strconv.Itoa(out.Items[limit-1].Position)
			out.NextCursor = &next
			break
		}
		var v pendingView
		r.fill(&v, q)
		out.Items = append(out.Items, queueItem{
			SessionID: q.ID, Name: q.Name, Owner: q.Owner, Domain: q.Domain, Project: q.Project, ResourceGroup: q.ResourceGroup,
			Priority: q.Priority, RequestedSlots: nonNilSlots(q.RequestedSlots), CreatedAt: q.CreatedAt, Position: pos,
			PlaceableNow: v.PlaceableNow, Reason: v.Reason, Checks: v.Checks, EstimatedStart: v.EstimatedStart, Estimate: v.Estimate,
		})
	}
	return c.JSON(out)
}
