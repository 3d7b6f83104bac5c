package e2e

import (
	"bufio"
	"context"
	"encoding/json"
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

// A session's pre-opened port served by busybox httpd (started a moment
// after the container) becomes ready: the agent probes it, the session's
// event stream carries the change (kernel.apps-ready), and
// GET /v1/sessions/{id} shows the app ready with the time it answered.
func TestAnAppBecomesReady(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri)
	c := d.create(map[string]any{
		"command":       "sh -c 'sleep 1; mkdir -p /www && echo up > /www/index.html && exec busybox httpd -f -p 9000 -h /www'",
		"resources":     map[string]any{"cpu": 1, "mem": "64m"},
		"preopen_ports": []int{9000},
	})

	// The change stream, from the session's creation on.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/events?kinds=session&last_event_id=%d", d.api, c.Position), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %d", res.StatusCode)
	}
	var readyAt uint64
	lines := bufio.NewScanner(res.Body)
	for readyAt == 0 && lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data:")
		if !ok {
			continue
		}
		var ch struct {
			Kind     string `json:"kind"`
			ID       string `json:"id"`
			Position uint64 `json:"position"`
			Type     string `json:"type"`
		}
		if json.Unmarshal([]byte(data), &ch) == nil && ch.ID == c.ID && ch.Type == "kernel.apps-ready" {
			readyAt = ch.Position
		}
	}
	if readyAt == 0 {
		t.Fatalf("the event stream ended without the app getting ready: %v", lines.Err())
	}

	var v struct {
		Status    string     `json:"status"`
		StartedAt *time.Time `json:"started_at"`
		Kernels   []struct {
			ServicePorts []struct {
				Name    string     `json:"name"`
				Ready   bool       `json:"ready"`
				ReadyAt *time.Time `json:"ready_at"`
			} `json:"service_ports"`
		} `json:"kernels"`
	}
	d.call("GET", fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", c.ID, readyAt), nil, http.StatusOK, &v)
	if v.Status != "RUNNING" || len(v.Kernels) != 1 || len(v.Kernels[0].ServicePorts) != 1 {
		t.Fatalf("session %+v: want RUNNING with one app", v)
	}
	if p := v.Kernels[0].ServicePorts[0]; p.Name != "port-9000" || !p.Ready || p.ReadyAt == nil {
		t.Fatalf("app %+v: want port-9000 ready", p)
	}
	if v.StartedAt != nil {
		// The app starts a second after its container (sleep 1).
		t.Logf("app ready %s after the session started", v.Kernels[0].ServicePorts[0].ReadyAt.Sub(*v.StartedAt))
	}
	d.awaitStatus(c.ID, d.terminate(c.ID), "TERMINATED")
}

// A session whose image its agent must pull (from a registry the test
// serves, podmantest.RegistryImage) shows the pull's progress: the event
// stream carries kernel.pull-progressed, and GET /v1/sessions/{id} keeps
// the latest progress under the kernel once it runs.
func TestAPullShowsItsProgress(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	ref := podmantest.RegistryImage(t, uri)
	d := startDev(t, uri)
	var registered struct {
		Position uint64 `json:"position"`
	}
	d.call("POST", "/v1/images", map[string]any{"reference": ref}, http.StatusCreated, &registered)
	var c created
	d.call("POST", fmt.Sprintf("/v1/sessions?wait_for_position=%d", registered.Position),
		map[string]any{"image": ref, "command": "sleep 60", "resources": map[string]any{"cpu": 1, "mem": "64m"}}, http.StatusCreated, &c)
	d.awaitStatus(c.ID, c.Position, "RUNNING")

	var timeline struct {
		Items []struct {
			Kind    string `json:"kind"`
			Summary string `json:"summary"`
		} `json:"items"`
	}
	d.call("GET", "/v1/sessions/"+c.ID+"/timeline", nil, http.StatusOK, &timeline)
	var pulled []string
	for _, it := range timeline.Items {
		if it.Kind == "kernel.pull-progressed" {
			pulled = append(pulled, it.Summary)
		}
	}
	if len(pulled) == 0 {
		t.Fatalf("timeline %+v: no kernel.pull-progressed", timeline.Items)
	}
	t.Logf("pull progress in the timeline: %q", pulled)
	var v struct {
		Kernels []struct {
			PullProgress *struct {
				LayersTotal int   `json:"layers_total"`
				BytesTotal  int64 `json:"bytes_total"`
				Percent     int   `json:"percent"`
			} `json:"pull_progress"`
		} `json:"kernels"`
	}
	d.call("GET", "/v1/sessions/"+c.ID, nil, http.StatusOK, &v)
	if len(v.Kernels) != 1 || v.Kernels[0].PullProgress == nil || v.Kernels[0].PullProgress.BytesTotal < podmantest.RegistryLayerBytes {
		t.Fatalf("kernels %+v: want the pull's progress, knowing the new layer's size", v.Kernels)
	}
	d.awaitStatus(c.ID, d.terminate(c.ID), "TERMINATED")
}
