package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// A session of an image that cannot be had (registered, but no registry
// serves it: none is reachable here) reaches ERROR with the cause in its
// status message, without waiting for the scheduler's start timeout. The
// time from its placement to ERROR is logged (the goal is under 5 s; not
// asserted, as timing is for benchmarks).
func TestABadImageShowsItsError(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri)
	const ref = "localhost/cairn/nope:latest"
	var registered struct {
		Position uint64 `json:"position"`
	}
	d.call("POST", "/v1/images", map[string]any{"reference": ref}, http.StatusCreated, &registered)
	// The request checks the image in the read models: once they show it.
	var c created
	d.call("POST", fmt.Sprintf("/v1/sessions?wait_for_position=%d", registered.Position),
		map[string]any{"image": ref, "resources": map[string]any{"cpu": 1, "mem": "64m"}}, http.StatusCreated, &c)
	s := d.await(c.ID, c.Position, "ends", func(s session) bool { return terminal(s.Status) })
	var v struct {
		Status        string     `json:"status"`
		StatusReason  string     `json:"status_reason"`
		StatusMessage string     `json:"status_message"`
		ScheduledAt   *time.Time `json:"scheduled_at"`
		TerminatedAt  *time.Time `json:"terminated_at"`
	}
	d.call("GET", "/v1/sessions/"+c.ID, nil, http.StatusOK, &v)
	if v.Status != "ERROR" || v.StatusReason != "failed-to-start" || !strings.Contains(v.StatusMessage, ref) {
		t.Fatalf("session %s: %+v, want ERROR failed-to-start naming the image", s, v)
	}
	if v.ScheduledAt == nil || v.TerminatedAt == nil {
		t.Fatalf("session %+v: no scheduled_at or terminated_at", v)
	}
	t.Logf("bad image: placed -> ERROR in %s (%q)", v.TerminatedAt.Sub(*v.ScheduledAt), v.StatusMessage)
}
