package commandapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/readapi"
)

// sseEvent is one server-sent event as a stream of GET /v1/events sends it.
type sseEvent struct {
	ID    string
	Event string
	Data  string
	// At is when the client had read it whole.
	At time.Time
}

// change is the data of a change event.
type change struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Position uint64 `json:"position"`
	Type     string `json:"type"`
}

func (ev sseEvent) change(t testing.TB) change {
	t.Helper()
	var c change
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		t.Fatalf("event %+v: %v", ev, err)
	}
	return c
}

// listen serves the test app on a loopback port, with the change feed,
// until the test ends (the streams need a real connection: app.Test reads
// answers whole). As the server does, it stops the feed first, which ends
// the streams, then the HTTP server.
func (e *env) listen(t testing.TB) string {
	t.Helper()
	e.listenOnce.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, stopFeed := context.WithCancel(context.Background())
		fed := make(chan error, 1)
		go func() { fed <- e.queries.RunChanges(ctx) }()
		go e.app.Listener(ln)
		t.Cleanup(func() {
			stopFeed()
			if err := <-fed; err != nil {
				t.Errorf("change feed: %v", err)
			}
			if err := e.app.ShutdownWithTimeout(waitBound); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
		e.url = "http://" + ln.Addr().String()
	})
	return e.url
}

// sseStream is an open GET /v1/events.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
	// ended is closed when the server ended the stream.
	ended chan struct{}
}

// openStream opens GET /v1/events?query as token's caller, with
// Last-Event-ID lastID unless empty, and checks the 200.
func (e *env) openStream(t testing.TB, token, query, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.listen(t)+"/v1/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token(token))
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("GET /v1/events%s: %d %s", query, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 1024), ended: make(chan struct{})}
	go s.read()
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return s
}

// read parses the stream into events (the SSE format: fields until a
// blank line; comments and id-only blocks are kept with an empty Event).
func (s *sseStream) read() {
	defer close(s.ended)
	sc := bufio.NewScanner(s.resp.Body)
	var ev sseEvent
	var any bool
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if any {
				ev.At = time.Now()
				s.events <- ev
			}
			ev, any = sseEvent{}, false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID, any = value, true
		case "event":
			ev.Event, any = value, true
		case "data":
			ev.Data, any = value, true
		}
	}
}

// next returns the next event with a name (id-only blocks skipped).
func (s *sseStream) next(t testing.TB) sseEvent {
	t.Helper()
	timeout := time.NewTimer(waitBound)
	defer timeout.Stop()
	for {
		select {
		case ev := <-s.events:
			if ev.Event != "" {
				return ev
			}
		case <-s.ended:
			select {
			case ev := <-s.events:
				if ev.Event != "" {
					return ev
				}
				continue
			default:
			}
			t.Fatal("the stream ended")
		case <-timeout.C:
			t.Fatalf("no event within %s", waitBound)
		}
	}
}

// ready reads the stream's ready event and returns its position.
func (s *sseStream) ready(t testing.TB) uint64 {
	t.Helper()
	ev := s.next(t)
	if ev.Event != "ready" {
		t.Fatalf("first event %+v, want ready", ev)
	}
	p, err := strconv.ParseUint(ev.ID, 10, 64)
	if err != nil {
		t.Fatalf("ready id %q: %v", ev.ID, err)
	}
	return p
}

// until reads changes up to the first one that stop accepts, returned
// last; the changes before it first.
func (s *sseStream) until(t testing.TB, stop func(change) bool) []change {
	t.Helper()
	got, _ := s.untilAt(t, stop)
	return got
}

// untilAt is until, also returning when the last change was read.
func (s *sseStream) untilAt(t testing.TB, stop func(change) bool) ([]change, time.Time) {
	t.Helper()
	var got []change
	for {
		ev := s.next(t)
		c := ev.change(t)
		if ev.Event != c.Kind || ev.ID != strconv.FormatUint(c.Position, 10) {
			t.Fatalf("event %+v: its name and id are not its kind and position", ev)
		}
		got = append(got, c)
		if stop(c) {
			return got, ev.At
		}
	}
}

// fence registers an image as the provisioner: a change every caller may
// see, after everything written before it. Its id is returned.
func (e *env) fence(t testing.TB) string {
	t.Helper()
	ref := "localhost/fence-" + uuid.NewString()[:8] + ":latest"
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.RegisterImage.Handle(ctx, testMD, commands.RegisterImage{Actor: system, Reference: ref, Architecture: "x86_64"})
	})
	return readapi.ImageID(ref, "x86_64")
}

func isImage(id string) func(change) bool {
	return func(c change) bool { return c.Kind == "image" && c.ID == id }
}

func sessionsOf(cs []change) map[string][]string {
	out := map[string][]string{}
	for _, c := range cs {
		if c.Kind == "session" {
			out[c.ID] = append(out[c.ID], c.Type)
		}
	}
	return out
}

// A session created by its owner reaches the owner's stream and its
// domain's admin's, and never a stream of another domain: the admin and
// user of "other" see the fence that follows it and nothing of it.
func TestEventsStreamOnlyWhatTheCallerMaySee(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	streams := map[string]*sseStream{}
	for _, who := range []string{aliceToken, bobToken, "dadmin", monitorToken, "carol", "oadmin", adminToken} {
		streams[who] = e.openStream(t, who, "", "")
		streams[who].ready(t)
	}
	s := e.create(t, aliceToken, validBody)
	fence := e.fence(t)
	for who, want := range map[string]bool{aliceToken: true, bobToken: false, "dadmin": true, monitorToken: true, "carol": false, "oadmin": false, adminToken: true} {
		got := sessionsOf(streams[who].until(t, isImage(fence)))
		if types, ok := got[s.ID]; ok != want {
			t.Errorf("%s's stream: session %s seen %v (%v), want %v", who, s.ID, ok, types, want)
		} else if ok && types[0] != domain.TypeSessionRequested {
			t.Errorf("%s's stream: the session's first change is %v, want %s", who, types, domain.TypeSessionRequested)
		}
		if want && len(got) != 1 || !want && len(got) != 0 {
			t.Errorf("%s's stream saw sessions %v, want only %s", who, got, s.ID)
		}
	}
	// The change is sent once the read model shows it: a GET right after
	// it answers the session.
	if r := e.do(t, "GET", "/v1/sessions/"+s.ID, aliceToken, ""); r.status != http.StatusOK {
		t.Errorf("GET after the change: %d %s", r.status, r.body)
	}
}

// A folder of a user reaches its owner, and an invitation to it the
// invitee too; never another domain.
func TestEventsStreamFoldersToTheirAudience(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	streams := map[string]*sseStream{}
	for _, who := range []string{vfAlice, vfBob, vfCarol, vfEve, "carol"} {
		streams[who] = e.openStream(t, who, "?kinds=vfolder,image", "")
		streams[who].ready(t)
	}
	r := e.do(t, "POST", "/v1/vfolders", vfAlice, `{"name":"mine","host":"local"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create folder: %d %s", r.status, r.body)
	}
	var f struct {
		ID string `json:"id"`
	}
	r.decode(t, &f)
	fence := e.fence(t)
	for who, want := range map[string]bool{vfAlice: true, vfBob: false, vfCarol: false, vfEve: false, "carol": false} {
		got := streams[who].until(t, isImage(fence))
		seen := false
		for _, c := range got {
			if c.Kind == "vfolder" && c.ID == f.ID {
				seen = true
			} else if c.Kind != "image" {
				t.Errorf("%s's stream filtered on vfolder and image sent %+v", who, c)
			}
		}
		if seen != want {
			t.Errorf("%s's stream: folder seen %v, want %v", who, seen, want)
		}
	}
	// Invited, bob hears of it (his invitations changed); carol does not.
	r = e.do(t, "POST", "/v1/vfolders/"+f.ID+"/invitations", vfAlice, `{"email":"bob@cairn.test","permission":"ro"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	fence = e.fence(t)
	for who, want := range map[string]bool{vfAlice: true, vfBob: true, vfCarol: false, vfEve: false} {
		seen := false
		for _, c := range streams[who].until(t, isImage(fence)) {
			seen = seen || c.Kind == "vfolder" && c.ID == f.ID && c.Type == domain.TypeVFolderInvited
		}
		if seen != want {
			t.Errorf("%s's stream: invitation seen %v, want %v", who, seen, want)
		}
	}
}

// A stream resumed with Last-Event-ID (or ?last_event_id=) gets exactly
// the changes it missed, in order, then goes on live without repeating
// any.
func TestEventsResumeWithoutGapOrRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	first := e.openStream(t, aliceToken, "?kinds=session", "")
	from := first.ready(t)
	a1 := e.create(t, aliceToken, validBody)
	if got := first.until(t, func(c change) bool { return c.ID == a1.ID }); len(got) != 1 {
		t.Fatalf("first stream: %+v", got)
	}
	first.resp.Body.Close() // the client goes away

	// Missed meanwhile: two of alice's sessions and one of carol's.
	a2 := e.create(t, aliceToken, validBody)
	e.create(t, "carol", `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"project":"ml"}`)
	a3 := e.create(t, aliceToken, validBody)
	e.wait(t, a3.Position)

	// Resumed by the header and by the query parameter: each gets exactly
	// a1, a2, a3 (from the log or live: the ready event may come anywhere
	// between), then a4, live.
	resumed := []*sseStream{
		e.openStream(t, aliceToken, "?kinds=session", strconv.FormatUint(from, 10)),
		e.openStream(t, aliceToken, "?kinds=session&last_event_id="+strconv.FormatUint(from, 10), ""),
	}
	a4 := e.create(t, aliceToken, validBody)
	for i, s := range resumed {
		var got []change
		ready := false
		for !ready || len(got) == 0 || got[len(got)-1].ID != a4.ID {
			ev := s.next(t)
			if ev.Event == "ready" {
				ready = true
				continue
			}
			got = append(got, ev.change(t))
		}
		var ids []string
		for j, c := range got {
			ids = append(ids, c.ID)
			if j > 0 && c.Position <= got[j-1].Position {
				t.Errorf("stream %d: positions out of order: %+v", i, got)
			}
		}
		if want := []string{a1.ID, a2.ID, a3.ID, a4.ID}; strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("stream %d resumed with %v, want %v", i, ids, want)
		}
	}
}

// A bad Last-Event-ID or kind is 400 naming the parameter.
func TestEventsRefusesBadParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, c := range []struct{ query, field string }{
		{"?kinds=session,spaceship", "kinds"},
		{"?last_event_id=-3", "last_event_id"},
		{"?last_event_id=abc", "last_event_id"},
	} {
		r := e.do(t, "GET", "/v1/events"+c.query, aliceToken, "")
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", c.query, r.status, r.body)
			continue
		}
		if p := r.problem(t); p.Field != c.field {
			t.Errorf("%s: field %q, want %q", c.query, p.Field, c.field)
		}
	}
	if r := e.do(t, "GET", "/v1/events", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", r.status)
	}
}

// A client's GET right after its own 201 sees the object, and a user logs
// in right after being created, without wait_for_position, again and
// again; a GET of nothing is still 404.
func TestGetAfterCreateSeesTheObject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for i := range 30 {
		s := e.create(t, aliceToken, validBody)
		if r := e.do(t, "GET", "/v1/sessions/"+s.ID, aliceToken, ""); r.status != http.StatusOK {
			t.Fatalf("round %d: GET /v1/sessions/%s right after its 201: %d %s", i, s.ID, r.status, r.body)
		}
		r := e.do(t, "POST", "/v1/vfolders", vfAlice, fmt.Sprintf(`{"name":"f%d","host":"local"}`, i))
		if r.status != http.StatusCreated {
			t.Fatalf("create folder: %d %s", r.status, r.body)
		}
		var f struct {
			ID string `json:"id"`
		}
		r.decode(t, &f)
		if r := e.do(t, "GET", "/v1/vfolders/"+f.ID, vfAlice, ""); r.status != http.StatusOK {
			t.Fatalf("round %d: GET /v1/vfolders/%s right after its 201: %d %s", i, f.ID, r.status, r.body)
		}
		r = e.do(t, "POST", "/v1/users", adminToken, fmt.Sprintf(`{"email":"ryw%d@example.com","domain":"default","role":"user","password":"a-long-password"}`, i))
		if r.status != http.StatusCreated {
			t.Fatalf("create user: %d %s", r.status, r.body)
		}
		var u struct {
			ID string `json:"id"`
		}
		r.decode(t, &u)
		if r := e.do(t, "GET", "/v1/users/"+u.ID, adminToken, ""); r.status != http.StatusOK {
			t.Fatalf("round %d: GET /v1/users/%s right after its 201: %d %s", i, u.ID, r.status, r.body)
		}
		// A new user logs in at once (the login looks again once the read
		// models show everything committed).
		r = e.do(t, "POST", "/v1/users", adminToken, fmt.Sprintf(`{"email":"now%d@example.com","domain":"default","role":"user","password":"a-long-password"}`, i))
		if r.status != http.StatusCreated {
			t.Fatalf("create user: %d %s", r.status, r.body)
		}
		if r := e.do(t, "POST", "/v1/auth/session", "", fmt.Sprintf(`{"email":"now%d@example.com","password":"a-long-password"}`, i)); r.status != http.StatusOK {
			t.Fatalf("round %d: log in right after the user's 201: %d %s", i, r.status, r.body)
		}
	}
	if r := e.do(t, "GET", "/v1/sessions/"+uuid.NewString(), aliceToken, ""); r.status != http.StatusNotFound {
		t.Errorf("GET of no session: %d, want 404", r.status)
	}
	// Another tenant's object is still hidden.
	c := e.create(t, "carol", `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"project":"ml"}`)
	if r := e.do(t, "GET", "/v1/sessions/"+c.ID, aliceToken, ""); r.status != http.StatusNotFound {
		t.Errorf("alice's GET of carol's session: %d, want 404", r.status)
	}
}

// An idle stream's heartbeat is a comment, then an id-only event once
// nothing is pending: it moves the client's Last-Event-ID past changes the
// caller may not see, so a reconnect does not read them again.
func TestEventsHeartbeatMovesTheIDOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{heartbeat: 20 * time.Millisecond})
	s := e.openStream(t, aliceToken, "", "")
	from := s.ready(t)
	hidden := e.create(t, "carol", `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"project":"ml"}`)
	e.wait(t, hidden.Position)
	if hidden.Position <= from {
		t.Fatalf("carol's session at %d, the stream from %d", hidden.Position, from)
	}
	timeout := time.After(waitBound)
	for {
		select {
		case ev := <-s.events:
			if ev.Event != "" {
				t.Fatalf("alice's stream sent %+v", ev)
			}
			if p, err := strconv.ParseUint(ev.ID, 10, 64); err == nil && p >= hidden.Position {
				return
			}
		case <-timeout:
			t.Fatalf("no heartbeat moved the id past %d within %s", hidden.Position, waitBound)
		}
	}
}

// A stream resumed from further back than the catch-up bound (here 100
// events) is told to reset (refetch) rather than read them, then goes on
// live.
func TestEventsResetWhenTooFarBehind(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{catchUp: 100})
	s := e.openStream(t, aliceToken, "", "")
	from := s.ready(t)
	// Events of no object (a stream no GET route serves), 101 of them.
	noise := make([]eventstore.EventData, 101)
	for i := range noise {
		noise[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: "test.noise", Version: 1, Data: []byte(`{}`)}
	}
	res, err := e.store.Append(context.Background(), "test-noise", eventstore.Any, noise...)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, res.Position)
	fence := e.fence(t)
	s.until(t, isImage(fence)) // the feed is past the noise

	resumed := e.openStream(t, aliceToken, "", strconv.FormatUint(from, 10))
	ev := resumed.next(t)
	if ev.Event != "reset" {
		t.Fatalf("first event of a stream resumed 101 events back: %+v, want reset", ev)
	}
	if ready := resumed.ready(t); strconv.FormatUint(ready, 10) != ev.ID || ready < res.Position {
		t.Errorf("reset at %s, ready at %d; the noise ends at %d", ev.ID, ready, res.Position)
	}
	a := e.create(t, aliceToken, validBody)
	resumed.until(t, func(c change) bool { return c.ID == a.ID })
}
