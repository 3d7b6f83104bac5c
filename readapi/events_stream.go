package readapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

const opEvents = "events.stream"

// Defaults of the change streams (Deps).
const (
	// DefaultHeartbeat is how often an idle stream sends a comment, so
	// that proxies do not close it.
	DefaultHeartbeat = 15 * time.Second
	// DefaultStreamLifetime is how long one stream lasts before the
	// server ends it and the client reconnects with Last-Event-ID, which
	// authenticates the caller again (a revoked token stops receiving).
	DefaultStreamLifetime = 5 * time.Minute
	// DefaultStreamBuffer is how many changes a stream may hold unsent
	// before the feed drops it.
	DefaultStreamBuffer = 256
	// DefaultStreamCatchUp bounds the events a resumed stream reads to
	// catch up; past it the stream sends a "reset" event instead
	// (refetch everything) and goes on from the feed's position.
	DefaultStreamCatchUp = 10_000
)

const (
	// streamRetryMillis is the reconnection delay the streams advise.
	streamRetryMillis = 1000
	// streamWriteIdle bounds a write of a stream: a client that reads
	// nothing for this long is gone. Every write moves the deadline on,
	// so a stream may outlast the server's write timeout.
	streamWriteIdle = time.Minute
	// catchUpPage is how many events one catch-up read takes.
	catchUpPage = 500
	// paramLastEventID resumes a stream when the Last-Event-ID header
	// cannot be set (an EventSource opened by a fresh page).
	paramLastEventID = "last_event_id"
	paramKinds       = "kinds"
)

// streamEvents handles GET /v1/events: a text/event-stream of the changes
// the caller may see (see changes.go). Each change is an event whose id
// is the log position that caused it, whose type is the object's kind,
// and whose data is {"kind","id","position","type"}: the page refetches
// the object through its GET route, which already shows the change. A
// stream opens with a "ready" event carrying the position it starts
// after; Last-Event-ID (or ?last_event_id=) resumes after that position
// with nothing missed and nothing repeated. ?kinds=session,vfolder keeps
// only those kinds.
func (a *api) streamEvents(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	kinds, err := parseKinds(c)
	if err != nil {
		return err
	}
	after, resume, err := lastEventID(c)
	if err != nil {
		return err
	}
	// The stream outlives the handler: the caller's strings may be views
	// of the request's buffers.
	p := &who.Principal
	p.UserID, p.Role, p.Domain, p.AccessKey = strings.Clone(p.UserID), strings.Clone(p.Role), strings.Clone(p.Domain), strings.Clone(p.AccessKey)
	p.Projects = slices.Clone(p.Projects)
	for i := range p.Projects {
		p.Projects[i] = strings.Clone(p.Projects[i])
	}
	sees := func(ch change) bool {
		return (kinds == nil || slices.Contains(kinds, ch.Kind)) && who.seesChange(ch)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), a.MaxWait)
	sub, from, err := a.changes.subscribe(ctx, sees)
	cancel()
	if err != nil {
		return err
	}
	s := &eventStream{a: a, sub: sub, sees: sees, from: from, after: after, resume: resume, conn: c.Context().Conn()}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no") // proxies: do not hold events back
	c.Context().SetBodyStreamWriter(s.run)
	return nil
}

// parseKinds reads ?kinds=; nil keeps every kind.
func parseKinds(c *fiber.Ctx) ([]string, error) {
	raw := c.Query(paramKinds)
	if raw == "" {
		return nil, nil
	}
	var kinds []string
	for k := range strings.SplitSeq(raw, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(changeKinds, k) {
			return nil, domain.Invalid(opEvents, paramKinds, "%q is not one of %s", k, strings.Join(changeKinds, ", "))
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// lastEventID reads the position to resume after: the Last-Event-ID
// header, else ?last_event_id=; resume is false when neither is given.
func lastEventID(c *fiber.Ctx) (after uint64, resume bool, err error) {
	raw := c.Get("Last-Event-ID")
	if raw == "" {
		raw = c.Query(paramLastEventID)
	}
	if raw == "" {
		return 0, false, nil
	}
	after, err = strconv.ParseUint(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		return 0, false, domain.Invalid(opEvents, paramLastEventID, "must be a position (the id of an event this stream sent), not %q", raw)
	}
	return after, true, nil
}

// eventStream is one open stream, written after the handler returned
// (nothing of the request's fiber.Ctx is used any more).
type eventStream struct {
	a      *api
	sub    *subscriber
	sees   func(change) bool
	from   uint64 // the feed's position when the stream subscribed
	after  uint64 // the client's Last-Event-ID
	resume bool
	conn   net.Conn
	w      *bufio.Writer
	// last is the position the client has everything up to.
	last uint64
}

func (s *eventStream) run(w *bufio.Writer) {
	defer s.a.changes.unsubscribe(s.sub)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // before unsubscribe: the stream's own end is not a drop
	if s.conn != nil {
		// A drop (the client fell behind, or the server stops) ends a
		// write blocked on a client that reads nothing at once, rather
		// than after streamWriteIdle: a shutdown does not wait for it.
		go func() {
			select {
			case <-s.sub.dropped:
				if ctx.Err() == nil {
					s.conn.SetWriteDeadline(time.Now())
				}
			case <-ctx.Done():
			}
		}()
	}
	s.w = w
	w.WriteString("retry: " + strconv.Itoa(streamRetryMillis) + "\n\n")
	s.last = s.from
	if s.resume {
		s.last = s.after
		if s.after < s.from && !s.catchUp(ctx) {
			return
		}
		s.last = max(s.after, s.from)
	}
	s.event("ready", strconv.FormatUint(s.last, 10), `{"position":`+strconv.FormatUint(s.last, 10)+`}`)
	if !s.flush() {
		return
	}
	heartbeat := time.NewTicker(s.a.Heartbeat)
	defer heartbeat.Stop()
	lifetime := time.NewTimer(s.a.StreamLifetime)
	defer lifetime.Stop()
	for {
		select {
		case c := <-s.sub.ch:
			s.change(c)
			for more := true; more; { // whatever else is queued, in one flush
				select {
				case c := <-s.sub.ch:
					s.change(c)
				default:
					more = false
				}
			}
		case <-heartbeat.C:
			// Every change up to the feed's position is queued before the
			// position moves: once the queue is empty the client has all
			// it may see up to there, and an id-only event moves its
			// Last-Event-ID on, so a reconnect does not read those events
			// again.
			p := s.a.changes.position()
			w.WriteString(": keep-alive\n\n")
			if len(s.sub.ch) == 0 && p > s.last {
				s.last = p
				w.WriteString("id: " + strconv.FormatUint(p, 10) + "\n\n")
			}
		case <-s.sub.dropped:
			return // fell behind, or the server stops: the client resumes
		case <-lifetime.C:
			return
		}
		if !s.flush() {
			return
		}
	}
}

// catchUp sends the changes the caller may see after s.after up to
// s.from, read from the log, and reports whether the stream goes on. Past
// StreamCatchUp events it sends "reset" instead: the page refetches what it
// shows.
func (s *eventStream) catchUp(ctx context.Context) bool {
	cursor, n := s.after, 0
	for cursor < s.from {
		page, err := s.a.Log.ReadAll(ctx, cursor, catchUpPage)
		if err != nil || len(page) == 0 {
			return false
		}
		for _, ev := range page {
			if ev.Position > s.from {
				return s.flush()
			}
			cursor = ev.Position
			if n++; n > s.a.StreamCatchUp {
				s.last = s.from
				s.event("reset", strconv.FormatUint(s.from, 10), `{"position":`+strconv.FormatUint(s.from, 10)+`}`)
				return s.flush()
			}
			if c, ok := s.a.classify(ctx, ev); ok && s.sees(c) {
				s.change(c)
			}
		}
		if !s.flush() {
			return false
		}
	}
	return true
}

// change writes c unless the client has it already.
func (s *eventStream) change(c change) {
	if c.Position <= s.last {
		return
	}
	data, err := json.Marshal(c)
	if err != nil {
		return
	}
	s.last = c.Position
	s.event(c.Kind, strconv.FormatUint(c.Position, 10), string(data))
}

// event writes one server-sent event.
func (s *eventStream) event(name, id, data string) {
	s.w.WriteString("id: " + id + "\nevent: " + name + "\ndata: " + data + "\n\n")
}

// flush sends what is written and reports whether the client is still
// there.
func (s *eventStream) flush() bool {
	if s.conn != nil {
		s.conn.SetWriteDeadline(time.Now().Add(streamWriteIdle))
	}
	return s.w.Flush() == nil
}
