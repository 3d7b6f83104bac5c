package devserver

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An open change stream ends when the server stops, and does not hold the
// shutdown up: Run returns nil (an HTTP shutdown that waited for the
// stream would time out and fail the stop).
func TestStopEndsTheChangeStreams(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(filepath.Join(t.TempDir(), "data")))
	req, err := http.NewRequest("GET", r.creds.APIURL+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /v1/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// The stream is live once it said ready.
	for line := range lines {
		if line == "event: ready" {
			break
		}
	}
	r.stop(t) // fails the test unless Run returned nil
	end := time.After(time.Minute)
	for {
		select {
		case _, open := <-lines:
			if !open {
				return // the server ended the stream
			}
		case <-end:
			t.Fatal("the stream was still open a minute after the server stopped")
		}
	}
}
