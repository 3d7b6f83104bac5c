package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// Timeouts of the streaming tests: the old total deadline (ReadTimeout)
// is short, the body idle timeout long beside the trickle's pauses.
const (
	testReadTimeout = time.Second
	testBodyIdle    = 3 * time.Second
	tricklePause    = 20 * time.Millisecond
	trickleFor      = 3 * testReadTimeout
)

// streamingApp hashes the body of PUT /upload (streamed) and echoes the
// length of PUT /json's (read whole); a failed read of the upload is
// reported as storage does, an invalid "path".
func streamingApp(t *testing.T) *served {
	return serveApp(t, Config{BodyLimit: 1024, ReadTimeout: testReadTimeout, BodyIdleTimeout: testBodyIdle,
		StreamRequestBody: func(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/upload") }}, ListenerConfig{},
		func(app *fiber.App) {
			app.Put("/upload", func(c *fiber.Ctx) error {
				h := sha256.New()
				if _, err := io.Copy(h, BodyStream(c)); err != nil {
					return &domain.Error{Op: "upload", Kind: domain.KindInvalid, Field: "path", Message: "reading the upload", Err: err}
				}
				return c.SendString(hex.EncodeToString(h.Sum(nil)))
			})
			// A handler that loses the read's error is answered 408 too.
			app.Put("/upload-lossy", func(c *fiber.Ctx) error {
				if _, err := io.Copy(io.Discard, BodyStream(c)); err != nil {
					return domain.Invalid("upload", "path", "cannot read: %v", err)
				}
				return nil
			})
			app.Put("/json", func(c *fiber.Ctx) error { return c.JSON(len(c.Body())) })
		})
}

// trickle sends size bytes to url in chunks, one every pause, and stalls
// (sends nothing more, keeping the connection open) after stallAfter
// bytes if stallAfter > 0. It returns the answer and a function that
// waits for every byte to be sent and returns their hash.
func trickle(t *testing.T, url string, size, chunk, stallAfter int, pause time.Duration) (*http.Response, []byte, func() string) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	t.Cleanup(func() { close(done); pw.Close() })
	sum := make(chan string, 1)
	go func() {
		h := sha256.New()
		buf := make([]byte, chunk)
		for sent := 0; sent < size; sent += chunk {
			if stallAfter > 0 && sent >= stallAfter {
				<-done // stall until the test ends
				return
			}
			n := min(chunk, size-sent)
			for i := range buf[:n] {
				buf[i] = byte(sent + i)
			}
			h.Write(buf[:n])
			if _, err := pw.Write(buf[:n]); err != nil {
				return
			}
			time.Sleep(pause)
		}
		pw.Close()
		sum <- hex.EncodeToString(h.Sum(nil))
	}()
	req, err := http.NewRequest(http.MethodPut, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(size)
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body, func() string { return <-sum }
}

func TestStreamedBodyOutlastsTheReadTimeoutWhileItMakesProgress(t *testing.T) {
	t.Parallel()
	s := streamingApp(t)
	const chunk = 16 << 10
	size := int(trickleFor/tricklePause) * chunk
	resp, body, sent := trickle(t, "http://"+s.addr+"/upload", size, chunk, 0, tricklePause)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("an upload trickling for %s (read timeout %s) answered %d: %s", trickleFor, testReadTimeout, resp.StatusCode, body)
	}
	if want := sent(); string(body) != want {
		t.Fatalf("the server read other bytes than were sent: sha256 %s, sent %s", body, want)
	}
}

func TestStalledStreamedBodyIsCutWith408(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/upload", "/upload-lossy"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			stalledIs408(t, path)
		})
	}
}

func stalledIs408(t *testing.T, path string) {
	s := streamingApp(t)
	resp, body, _ := trickle(t, "http://"+s.addr+path, 1<<20, 16<<10, 64<<10, time.Millisecond)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled upload answered %d, want 408: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, ProblemContentType) {
		t.Fatalf("content type %q, want %s", ct, ProblemContentType)
	}
	var p Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusRequestTimeout || p.Field != "" || p.Kind != domain.KindUnavailable.String() {
		t.Fatalf("problem %+v: want status 408, kind unavailable, no field", p)
	}
	s.stillServing(t)
}

// A body read whole (not streamed) keeps the total deadline: trickled
// over longer than the read timeout, it is refused.
func TestWholeBodyKeepsTheTotalReadDeadline(t *testing.T) {
	t.Parallel()
	s := streamingApp(t)
	const size = 1000
	resp, body, _ := trickle(t, "http://"+s.addr+"/json", size, size/int(trickleFor/tricklePause), 0, tricklePause)
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("a JSON body trickling for %s past the read timeout %s was read: %s", trickleFor, testReadTimeout, body)
	}
}
