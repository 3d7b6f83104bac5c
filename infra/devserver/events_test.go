package devserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/images"
	"github.com/cairnhq/cairn/infra/pgtest"
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

// On either store, a GET right after a 201 answers the object without
// wait_for_position, and an open stream receives the change.
func TestLiveOnEitherStore(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(filepath.Join(t.TempDir(), "data"))
			if backend == "postgres" {
				url, schema := pgtest.Schema(t)
				sep := "?"
				if strings.Contains(url, "?") {
					sep = "&"
				}
				cfg.Store = url + sep + "schema=" + schema
			}
			r := start(t, cfg)
			stream := r.openStream(t)
			body := `{"image":"` + images.BaseImage + `","resources":{"cpu":1,"mem":"64m"}}`
			for i := range 20 {
				status, _, b := r.do(t, "POST", "/v1/sessions", strings.NewReader(body))
				var s struct {
					ID string `json:"id"`
				}
				if status != http.StatusCreated || json.Unmarshal(b, &s) != nil {
					t.Fatalf("create: %d %s", status, b)
				}
				if status, _, b := r.do(t, "GET", "/v1/sessions/"+s.ID, nil); status != http.StatusOK {
					t.Fatalf("round %d: GET right after the 201: %d %s", i, status, b)
				}
				stream.await(t, `"kind":"session","id":"`+s.ID+`"`)
			}
		})
	}
}

// lineStream is an open GET /v1/events read line by line.
type lineStream struct{ lines chan string }

// openStream opens GET /v1/events with the bootstrap token and waits for
// its ready event.
func (r *running) openStream(t *testing.T) *lineStream {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", r.creds.APIURL+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %d", resp.StatusCode)
	}
	s := &lineStream{lines: make(chan string, 1024)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	s.await(t, "event: ready")
	return s
}

// await reads lines until one contains want.
func (s *lineStream) await(t *testing.T, want string) {
	t.Helper()
	end := time.After(time.Minute)
	for {
		select {
		case line, open := <-s.lines:
			if !open {
				t.Fatalf("the stream ended before %q", want)
			}
			if strings.Contains(line, want) {
				return
			}
		case <-end:
			t.Fatalf("no %q within a minute", want)
		}
	}
}
