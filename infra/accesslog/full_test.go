package accesslog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// While the store takes no writes, the queue fills up and the API answers
// 503 rather than answer a request whose record could be lost; once the
// store takes writes again, it answers again, and every request answered
// with anything but 503 has its record.
func TestFullQueueRefusesRequestsInsteadOfDroppingRecords(t *testing.T) {
	f := newFixtureWith(t, accesslog.Config{Queue: 2, Interval: time.Millisecond, FullWait: 20 * time.Millisecond})
	n := 0
	get := func() (string, int, httpapi.Problem) {
		t.Helper()
		n++
		id := fmt.Sprintf("req-%03d", n)
		req := httptest.NewRequest(http.MethodGet, "/v1/sessions/abc", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(httpapi.HeaderRequestID, id)
		resp, err := f.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p httpapi.Problem
		if resp.StatusCode >= 400 {
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatalf("%s: %d without a problem body: %v", id, resp.StatusCode, err)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: %d without Retry-After", id, resp.StatusCode)
			}
		}
		return id, resp.StatusCode, p
	}
	answered := map[string]bool{}

	// Held, the store's write gate blocks every append: the Writer holds
	// one batch, the queue fills behind it.
	release, err := f.store.LockWrites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Until the Writer is stuck in its append with a full queue behind
	// it, every request is refused.
	refused := 0
	for refused < 3 {
		if n > 50 {
			release()
			t.Fatalf("%d requests answered while the store took no writes (queue of 2)", n)
		}
		id, status, p := get()
		switch status {
		case http.StatusOK:
			answered[id] = true
			refused = 0
		case http.StatusServiceUnavailable:
			if p.Kind != "unavailable" {
				t.Errorf("%s: 503 of kind %q", id, p.Kind)
			}
			refused++
		default:
			t.Fatalf("%s: %d", id, status)
		}
	}
	// The queue is full; the Writer holds a batch too, unless it has not
	// been scheduled yet (a loaded machine).
	if p := f.writer.Pending(); p < 2 {
		t.Errorf("after three 503s: Pending %d, want at least the queue of 2", p)
	}

	release()
	await.Until(t, 30*time.Second, "a 200 after the store took writes again", func() bool {
		id, status, _ := get()
		if status == http.StatusOK {
			answered[id] = true
		}
		return status == http.StatusOK
	})
	f.stop()

	stored := map[string]bool{}
	for _, r := range records(t, f.store, domain.AccessLogStream) {
		stored[r.RequestID] = true
	}
	for id := range answered {
		if !stored[id] {
			t.Errorf("request %s was answered 200 but has no access record", id)
		}
	}
	if len(answered) < 3 {
		t.Errorf("only %d requests answered: the test proved little", len(answered))
	}
}
