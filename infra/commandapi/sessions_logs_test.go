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

	for _, q := range []string{"tail=-1", "tail=ten", "tail=100001"} {
		r := e.do(t, "GET", "/v1/sessions/"+c.ID+"/logs?"+q, aliceToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != "tail" {
			t.Errorf("logs?%s: %d %s", q, r.status, r.body)
		}
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
