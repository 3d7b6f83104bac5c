package commandapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestGetSessionUnknownMalformedOrHiddenIs404(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, validBody)
	e.get(t, aliceToken, c.ID, c.Position) // projected

	for _, path := range []string{
		"/v1/sessions/0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11", // unknown
		"/v1/sessions/not-a-uuid",                           // malformed
		"/v1/sessions/" + c.ID + "%00",                      // malformed
		"/v1/sessions/0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11/logs",
		"/v1/sessions/not-a-uuid/logs",
	} {
		r := e.do(t, "GET", path, aliceToken, "")
		if r.status != http.StatusNotFound || r.problem(t).Kind != "not-found" {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	// Bob may not see Alice's session: same answer as an unknown one.
	for _, path := range []string{"/v1/sessions/" + c.ID, "/v1/sessions/" + c.ID + "/logs"} {
		r := e.do(t, "GET", path, bobToken, "")
		if r.status != http.StatusNotFound || r.problem(t).Kind != "not-found" {
			t.Errorf("bob GET %s: %d %s", path, r.status, r.body)
		}
	}
	// Admins and monitors see every session.
	for _, token := range []string{adminToken, monitorToken} {
		if s := e.get(t, token, c.ID, 0); s.ID != c.ID {
			t.Errorf("%s sees %+v", token, s)
		}
	}
}

func TestGetWithoutTokenIs401(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, path := range []string{"/v1/sessions", "/v1/sessions/0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11", "/v1/agents"} {
		r := e.do(t, "GET", path, "", "")
		if r.status != http.StatusUnauthorized || r.problem(t).Kind != "unauthenticated" {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
}

func TestWaitForPositionBadValueIs400(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, path := range []string{
		"/v1/sessions?wait_for_position=soon",
		"/v1/sessions/0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11?wait_for_position=-1",
		"/v1/agents?wait_for_position=1.5",
	} {
		r := e.do(t, "GET", path, adminToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != "wait_for_position" {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
}

// A position the read models do not reach within MaxWait is 503 with
// Retry-After, never a stale answer.
func TestWaitForPositionTimesOutWith503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxWait: 50 * time.Millisecond})
	c := e.create(t, aliceToken, validBody)
	far := c.Position + 1000
	for _, path := range []string{
		fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", c.ID, far),
		fmt.Sprintf("/v1/sessions?wait_for_position=%d", far),
		fmt.Sprintf("/v1/sessions/%s/logs?wait_for_position=%d", c.ID, far),
		fmt.Sprintf("/v1/agents?wait_for_position=%d", far),
	} {
		// The 503 itself proves the wait ended: it is only answered once
		// MaxWait has passed without the position being reached.
		r := e.do(t, "GET", path, aliceToken, "")
		p := r.problem(t)
		if r.status != http.StatusServiceUnavailable || p.Kind != "unavailable" || r.header.Get("Retry-After") != "1" {
			t.Errorf("GET %s: %d Retry-After %q %s", path, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	// The position it did reach is answered.
	if s := e.get(t, aliceToken, c.ID, c.Position); s.Status != "PENDING" {
		t.Fatalf("session %+v", s)
	}
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	a1 := e.create(t, aliceToken, validBody)
	a2 := e.create(t, aliceToken, validBody)
	b1 := e.create(t, bobToken, validBody)
	last := max(a1.Position, a2.Position, b1.Position)

	list := func(token, query string) (ids []string, next *string) {
		t.Helper()
		r := e.do(t, "GET", fmt.Sprintf("/v1/sessions?wait_for_position=%d&%s", last, query), token, "")
		if r.status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, r.status, r.body)
		}
		var page struct {
			Items      []session `json:"items"`
			NextCursor *string   `json:"next_cursor"`
		}
		r.decode(t, &page)
		for _, s := range page.Items {
			ids = append(ids, s.ID)
		}
		return ids, page.NextCursor
	}
	same := func(got []string, want ...string) bool {
		return fmt.Sprint(got) == fmt.Sprint(want)
	}

	// Newest first, in pages.
	ids, next := list(adminToken, "limit=2")
	if !same(ids, b1.ID, a2.ID) || next == nil {
		t.Fatalf("page 1: %v next %v", ids, next)
	}
	ids, next = list(adminToken, "limit=2&cursor="+*next)
	if !same(ids, a1.ID) || next != nil {
		t.Fatalf("page 2: %v next %v", ids, next)
	}
	// A user sees their own sessions only.
	if ids, _ := list(aliceToken, ""); !same(ids, a2.ID, a1.ID) {
		t.Fatalf("alice sees %v", ids)
	}
	// Status filter, one or several, any case.
	if ids, _ := list(adminToken, "status=pending"); len(ids) != 3 {
		t.Fatalf("pending: %v", ids)
	}
	if ids, _ := list(adminToken, "status=RUNNING,CANCELLED"); len(ids) != 0 {
		t.Fatalf("running or cancelled: %v", ids)
	}

	for query, field := range map[string]string{
		"status=SLEEPING": "status",
		"limit=0":         "limit",
		"limit=501":       "limit",
		"limit=many":      "limit",
		"cursor=xyz":      "cursor",
	} {
		r := e.do(t, "GET", "/v1/sessions?"+query, adminToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != field {
			t.Errorf("list %s: %d %s, want 400 %s", query, r.status, r.body, field)
		}
	}
}
