package commandapi_test

import (
	"fmt"
	"net/http"
	"testing"
)

type terminated struct {
	ID              string `json:"id"`
	Status          string `json:"status"`
	AlreadyFinished *bool  `json:"already_finished"`
	Position        uint64 `json:"position"`
}

func (e *env) delete(t *testing.T, token, id string, position uint64, want int) terminated {
	t.Helper()
	r := e.do(t, "DELETE", fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", id, position), token, "")
	if r.status != want {
		t.Fatalf("DELETE %s: %d %s, want %d", id, r.status, r.body, want)
	}
	var out terminated
	r.decode(t, &out)
	return out
}

func TestDeletePendingCancelsThenIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, validBody)

	acc := e.delete(t, aliceToken, c.ID, c.Position, http.StatusAccepted)
	if acc.ID != c.ID || acc.Position <= c.Position || acc.AlreadyFinished != nil {
		t.Fatalf("202 answer %+v", acc)
	}
	s := e.get(t, aliceToken, c.ID, acc.Position)
	if s.Status != "CANCELLED" || s.StatusReason != "user-requested" || s.Position <= c.Position || s.Position > acc.Position {
		t.Fatalf("after DELETE: %+v", s)
	}

	// Again: 200, already finished, and no new event.
	events := e.streamLength(t, c.ID)
	again := e.delete(t, aliceToken, c.ID, 0, http.StatusOK)
	if again.ID != c.ID || again.Status != "CANCELLED" || again.AlreadyFinished == nil || !*again.AlreadyFinished || again.Position != s.Position {
		t.Fatalf("second DELETE %+v", again)
	}
	if n := e.streamLength(t, c.ID); n != events {
		t.Fatalf("the second DELETE appended %d events", n-events)
	}
}

func TestDeletePlacedSessionGoesTerminating(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-1")
	c := e.create(t, aliceToken, validBody)
	pos := e.schedule(t, c, "node-1", "")

	acc := e.delete(t, aliceToken, c.ID, pos, http.StatusAccepted)
	if s := e.get(t, aliceToken, c.ID, acc.Position); s.Status != "TERMINATING" || s.StatusReason != "user-requested" {
		t.Fatalf("after DELETE: %+v", s)
	}
	// Terminating already: 200, not finished, nothing appended.
	events := e.streamLength(t, c.ID)
	again := e.delete(t, aliceToken, c.ID, 0, http.StatusOK)
	if again.Status != "TERMINATING" || again.AlreadyFinished == nil || *again.AlreadyFinished {
		t.Fatalf("second DELETE %+v", again)
	}
	if n := e.streamLength(t, c.ID); n != events {
		t.Fatalf("the second DELETE appended %d events", n-events)
	}
}

// A caller who sees every session may terminate one the read model does
// not show yet: the command looks it up in the event store.
func TestDeleteBeforeProjectionByAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, validBody)
	r := e.do(t, "DELETE", "/v1/sessions/"+c.ID, adminToken, "")
	if r.status != http.StatusAccepted {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	var out terminated
	r.decode(t, &out)
	if s := e.get(t, adminToken, c.ID, out.Position); s.Status != "CANCELLED" {
		t.Fatalf("after DELETE: %+v", s)
	}
}

func TestDeleteRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, validBody)
	e.get(t, aliceToken, c.ID, c.Position)
	for _, tc := range []struct {
		name, token, id string
		status          int
		kind            string
	}{
		{"unknown", aliceToken, "0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11", http.StatusNotFound, "not-found"},
		{"unknown, admin", adminToken, "0190a6f4-7b7c-7cc0-9a8e-2f3e6d8c1a11", http.StatusNotFound, "not-found"},
		{"malformed", adminToken, "42", http.StatusNotFound, "not-found"},
		{"someone else's", bobToken, c.ID, http.StatusNotFound, "not-found"},
		{"monitor", monitorToken, c.ID, http.StatusForbidden, "forbidden"},
		{"no token", "", c.ID, http.StatusUnauthorized, "unauthenticated"},
	} {
		r := e.do(t, "DELETE", "/v1/sessions/"+tc.id, tc.token, "")
		if r.status != tc.status || r.problem(t).Kind != tc.kind {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.kind)
		}
	}
	// None of them touched it.
	if s := e.get(t, aliceToken, c.ID, 0); s.Status != "PENDING" {
		t.Fatalf("after refusals: %+v", s)
	}
}
