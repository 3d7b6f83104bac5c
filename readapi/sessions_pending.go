package readapi

import (
	"cmp"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/projections/sessions"
)

const opSessionPending = "session.pending"

// pendingView is the answer of GET /v1/sessions/{id}/pending: why the
// session is not placed now, in words and codes, computed by a
// scheduling round over the current read models (round), its place in the
// queue and an estimated start where there is a basis for one.
type pendingView struct {
	SessionID     uuid.UUID            `json:"session_id"`
	Status        domain.SessionStatus `json:"status"`
	ResourceGroup string               `json:"resource_group"`
	// Pending is false for a session that is not PENDING: nothing else is
	// set then.
	Pending bool `json:"pending"`
	// PlaceableNow: the round placed it (the scheduler's next round will,
	// unless something changes first). Reason is the status reason the
	// round gives otherwise.
	PlaceableNow bool        `json:"placeable_now"`
	Reason       string      `json:"reason,omitempty"`
	Checks       []checkView `json:"checks"`
	Queue        *queueView  `json:"queue"`
	// EstimatedStart is null when there is no basis for one; Estimate says
	// what it rests on, or why there is none.
	EstimatedStart *time.Time `json:"estimated_start"`
	Estimate       string     `json:"estimate,omitempty"`
	// Recorded is what the scheduler last recorded on the session.
	Recorded    recordedView `json:"recorded"`
	EvaluatedAt time.Time    `json:"evaluated_at"`
}

// queueView is a session's place in the queue the scheduler walks.
type queueView struct {
	// Position is 1 for the session the scheduler considers first.
	Position int `json:"position"`
	// Length is the number of PENDING sessions in the queue.
	Length int `json:"length"`
	// Order is the queue's order (fifo, lifo, drf), after priority.
	Order placement.Order `json:"order"`
}

// recordedView is the reason and details the scheduler recorded (its
// sentences name requested amounts, never free ones) and its tries.
type recordedView struct {
	Reason  string   `json:"reason,omitempty"`
	Details []string `json:"details"`
	Tries   int      `json:"tries"`
}

// sessionPending handles GET /v1/sessions/{id}/pending. It sees what GET
// /v1/sessions/{id} sees.
func (a *api) sessionPending(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := ParseSessionID(c, opSessionPending)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opSessionPending); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opSessionPending, id)
	if err != nil {
		return err
	}
	out := pendingView{SessionID: s.ID, Status: s.Status, ResourceGroup: s.ResourceGroup, Checks: []checkView{},
		Recorded: recordedView{Reason: s.StatusReason, Details: nonNil(s.PendingDetails), Tries: s.PendingTries}, EvaluatedAt: a.Clock()}
	if s.Status != domain.StatusPending {
		return c.JSON(out)
	}
	r, err := a.simulate(c.UserContext())
	if err != nil {
		return err
	}
	i, ok := r.byID[id]
	if !ok {
		// Scheduled between the two reads: what the session read said
		// still stands, with nothing to explain.
		return c.JSON(out)
	}
	out.Pending = true
	r.fill(&out, r.queue[i])
	return c.JSON(out)
}

// fill sets what the round says of one queued session.
func (r *round) fill(v *pendingView, q sessions.Queued) {
	v.EvaluatedAt = r.now
	v.Queue = &queueView{Position: r.rank[q.ID], Length: len(r.queue), Order: cmp.Or(r.in.Ungrouped.Order, placement.OrderFIFO)}
	u, failed := r.failed[q.ID]
	v.PlaceableNow, v.Checks = r.placed[q.ID], []checkView{}
	if failed {
		v.Reason = u.Reason
		v.Checks = r.checks(q, u)
	}
	v.EstimatedStart, v.Estimate = r.estimate(q, u, v.PlaceableNow)
}
