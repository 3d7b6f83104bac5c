package accesslog

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const (
	expectKey  = "cairn.access.expect"
	deniedKey  = "cairn.access.denied"
	claimedKey = "cairn.access.claimed_key"
	requestKey = "cairn.access.request"
)

// request is what Middleware keeps of a request while it runs: when it
// started, the clock, and the carrier of the access record handed to its
// commands.
type request struct {
	start  time.Time
	clock  func() time.Time
	access Carrier
}

// Carrier carries a request's access record to the first append of its
// commands (commands.Access is the one the write side uses); Middleware
// asks it at the end whether an append took the record. Keeping it an
// interface keeps this package, which the query side uses too, free of
// the write side.
type Carrier interface {
	Taken() bool
}

// ExpectStatus tells the access record written with a command's events
// the status the route answers when the command succeeds (by default 201
// for POST, 202 for DELETE, 200 otherwise).
func ExpectStatus(c *fiber.Ctx, status int) { c.Locals(expectKey, status) }

// Deny marks the request as denied by authorization even when it is
// answered like a missing object (404, no existence leak).
func Deny(c *fiber.Ctx) { c.Locals(deniedKey, true) }

// Denied reports whether Deny marked the request: its 404 hides an object
// rather than reporting a missing one.
func Denied(c *fiber.Ctx) bool {
	denied, _ := c.Locals(deniedKey).(bool)
	return denied
}

// ClaimAccessKey records the access key a request claimed before it was
// authenticated, so a refused request's record still names it.
func ClaimAccessKey(c *fiber.Ctx, accessKey string) {
	c.Locals(claimedKey, strings.Clone(accessKey))
}

// Carry returns the request's carrier of its access record for the
// commands it sends, made by newCarrier on the first call
// (commands.NewAccess): put it in their commands.Metadata (the Access
// field), and the first append of those commands stores it with their
// events. The record says who (the authenticated principal), what (the
// method and route) and the status the route answers on success
// (ExpectStatus, or the method's default); call it after authentication
// and ExpectStatus, when the command is sent. Every call of one request
// returns the same carrier, so that one append at most takes it. Outside
// Middleware it returns the zero C: nothing to record.
func Carry[C Carrier](c *fiber.Ctx, newCarrier func(audit.Record) C) C {
	r, ok := c.Locals(requestKey).(*request)
	if !ok {
		var none C
		return none
	}
	if r.access == nil {
		rec := base(c, r.start, r.clock)
		rec.Outcome, rec.Status = audit.Success, expected(c)
		r.access = newCarrier(rec)
	}
	return r.access.(C)
}

// Middleware records every request: put it before authentication, so
// refused requests are recorded too. Clock defaults to time.Now. While the
// Writer's queue is full (the store takes no writes), requests are refused
// with 503 before they run, and a request whose record finds no room is
// answered 503 instead of its own answer: nothing is answered that the
// audit trail would not hold. A command's append that carried the record
// (see Carry) leaves nothing to write here, unless the request failed
// after all: then its record is written again, saying how it failed.
func Middleware(w *Writer, clock func() time.Time) fiber.Handler {
	if clock == nil {
		clock = time.Now
	}
	return func(c *fiber.Ctx) error {
		if w.Full() {
			return ErrFull
		}
		start := clock()
		r := &request{start: start, clock: clock}
		c.Locals(requestKey, r)
		err := c.Next()
		if r.access != nil && r.access.Taken() && err == nil {
			return nil
		}
		status := c.Response().StatusCode()
		if err != nil {
			status = httpapi.ProblemFor(err).Status
		}
		rec := base(c, start, clock)
		rec.EntityType, rec.EntityID = entityOf(c)
		rec.Status, rec.Outcome = status, outcome(c, status)
		if werr := w.Write(c.UserContext(), rec); werr != nil {
			// The answer was not sent yet: replace it, so that no
			// answer goes out without its record.
			w.log.Error("access record not written; the request is answered 503", "request_id", rec.RequestID, "status", status, "error", werr)
			c.Response().Reset()
			c.Set(httpapi.HeaderRequestID, rec.RequestID)
			return ErrFull
		}
		return err
	}
}

// base is the record's who, what, where and how long.
func base(c *fiber.Ctx, start time.Time, clock func() time.Time) audit.Record {
	route, _ := routeOf(c)
	rec := audit.Record{
		Time:      start,
		Action:    c.Method() + " " + route,
		ClientIP:  c.IP(),
		RequestID: httpapi.RequestID(c),
		Duration:  clock().Sub(start),
	}
	if p, ok := httpapi.CurrentPrincipal(c); ok {
		rec.UserID, rec.AccessKey = p.UserID, p.AccessKey
	} else if ak, ok := c.Locals(claimedKey).(string); ok {
		rec.AccessKey = ak
	}
	// fiber's strings may point into buffers reused after the request;
	// the record outlives it in the queue.
	for _, f := range []*string{&rec.Action, &rec.ClientIP, &rec.RequestID, &rec.UserID, &rec.AccessKey} {
		*f = strings.Clone(*f)
	}
	return rec
}

// routeOf is the matched route's pattern (/v1/sessions/:id), or the path
// itself when no route matched (a request refused by a group's middleware
// sees the group's prefix as its route).
func routeOf(c *fiber.Ctx) (pattern string, matched bool) {
	p := c.Path()
	if r := c.Route(); r != nil && (r.Path == p || strings.Contains(r.Path, ":")) {
		return r.Path, true
	}
	if len(p) > 256 {
		p = p[:256]
	}
	return p, false
}

// entityOf names what a request is about: the resource of its path
// (/v1/sessions/:id → session) and its id.
func entityOf(c *fiber.Ctx) (string, string) {
	route, matched := routeOf(c)
	segs := strings.Split(strings.TrimPrefix(route, "/v1/"), "/")
	if segs[0] == "" || strings.HasPrefix(segs[0], ":") {
		return "", ""
	}
	typ, id := strings.TrimSuffix(segs[0], "s"), ""
	switch {
	case matched:
		id = c.Params("id")
	case len(segs) > 1:
		id = segs[1]
	}
	return strings.Clone(typ), strings.Clone(id)
}

func expected(c *fiber.Ctx) int {
	if s, ok := c.Locals(expectKey).(int); ok {
		return s
	}
	switch c.Method() {
	case http.MethodPost:
		return http.StatusCreated
	case http.MethodDelete:
		return http.StatusAccepted
	}
	return http.StatusOK
}

func outcome(c *fiber.Ctx, status int) audit.Outcome {
	denied, _ := c.Locals(deniedKey).(bool)
	switch {
	case denied || status == http.StatusUnauthorized || status == http.StatusForbidden:
		return audit.Denied
	case status >= 400:
		return audit.Failure
	}
	return audit.Success
}
