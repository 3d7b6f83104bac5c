package commandapi_test

import (
	"fmt"
	"net/http"
	"testing"
)

func TestSessionLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-1")
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.shares":"0.5"}}`)

	// Not placed yet: 409.
	r := e.do(t, "GET", fmt.Sprintf("/v1/sessions/%s/logs?wait_for_position=%d", c.ID, c.Position), aliceToken, "")
	if r.status != http.StatusConflict || r.problem(t).Kind != "conflict" {
		t.Fatalf("logs of a pending session: %d %s", r.status, r.body)
	}

	pos := e.schedule(t, c, "node-1", "0.5")
	s := e.get(t, aliceToken, c.ID, pos)
	if s.Status != "SCHEDULED" || len(s.AgentIDs) != 1 || s.AgentIDs[0] != "node-1" ||
		len(s.Devices) != 1 || s.Devices[0].DeviceID != "GPU-0" || s.Devices[0].Amount != "0.5" || s.Kernels[0].AgentID != "node-1" {
		t.Fatalf("placed session %+v", s)
	}

	r = e.do(t, "GET", fmt.Sprintf("/v1/sessions/%s/logs?tail=20", c.ID), aliceToken, "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		string(r.body) != "hello from "+c.KernelIDs[0]+"\n" {
		t.Fatalf("logs: %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if got, want := e.logs.lastCall(), "node-1/"+c.KernelIDs[0]+"/20"; got != want {
		t.Fatalf("log source asked %q, want %q", got, want)
	}

	log := "hello from " + c.KernelIDs[0] + "\n"
	for _, tc := range []struct {
		query, body, start, next, complete, disposition string
		asked                                           string
	}{
		{"offset=0", log, "0", fmt.Sprint(len(log)), "true", "", "{Offset:0 Limit:1048576 Follow:false}"},
		{"offset=6&limit=4", log[6:10], "6", "10", "false", "", "{Offset:6 Limit:4 Follow:false}"},
		{"offset=6&kernel=" + c.KernelIDs[0], log[6:], "6", fmt.Sprint(len(log)), "true", "", "{Offset:6 Limit:1048576 Follow:false}"},
		{"", log, "0", "", "", "", "{Offset:0 Limit:0 Follow:false}"},
		{"follow=true&offset=3", log[3:], "3", "", "", "", "{Offset:3 Limit:0 Follow:true}"},
		{"download=true", log, "0", "", "", `attachment; filename=session-` + c.ID + `-kernel-` + c.KernelIDs[0] + `.log`, "{Offset:0 Limit:0 Follow:false}"},
	} {
		r := e.do(t, "GET", "/v1/sessions/"+c.ID+"/logs?"+tc.query, aliceToken, "")
		h := r.header
		if r.status != http.StatusOK || string(r.body) != tc.body || h.Get("Cairn-Log-Start") != tc.start ||
			h.Get("Cairn-Log-Offset") != tc.next || h.Get("Cairn-Log-Complete") != tc.complete ||
			h.Get("Content-Disposition") != tc.disposition || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("logs?%s: %d %q %v", tc.query, r.status, r.body, h)
		}
		if got, want := e.logs.lastCall(), "node-1/"+c.KernelIDs[0]+"/"+tc.asked; got != want {
			t.Errorf("logs?%s: log source asked %q, want %q", tc.query, got, want)
		}
	}

	for _, tc := range []struct{ query, field string }{
		{"tail=-1", "tail"}, {"tail=ten", "tail"}, {"tail=100001", "tail"},
		{"tail=5&offset=0", "tail"}, {"tail=5&follow=true", "tail"},
		{"offset=-1", "offset"}, {"offset=x", "offset"},
		{"offset=0&limit=0", "limit"}, {"offset=0&limit=8388609", "limit"}, {"follow=true&limit=5", "limit"}, {"limit=5", "limit"},
		{"follow=yes", "follow"}, {"download=2", "download"}, {"kernel=nope", "kernel"},
	} {
		r := e.do(t, "GET", "/v1/sessions/"+c.ID+"/logs?"+tc.query, aliceToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != tc.field {
			t.Errorf("logs?%s: %d %s, want 400 naming %s", tc.query, r.status, r.body, tc.field)
		}
	}
	// A kernel of another session: not this session's.
	r = e.do(t, "GET", "/v1/sessions/"+c.ID+"/logs?kernel="+c.ID, aliceToken, "")
	if r.status != http.StatusNotFound {
		t.Errorf("logs of a kernel the session does not have: %d %s", r.status, r.body)
	}
}

// A session cancelled before it was placed never has logs.
func TestSessionLogsOfACancelledSessionIs409(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, validBody)
	acc := e.delete(t, aliceToken, c.ID, c.Position, http.StatusAccepted)
	r := e.do(t, "GET", fmt.Sprintf("/v1/sessions/%s/logs?wait_for_position=%d", c.ID, acc.Position), aliceToken, "")
	if r.status != http.StatusConflict || r.problem(t).Kind != "conflict" {
		t.Fatalf("logs of a cancelled session: %d %s", r.status, r.body)
	}
}
