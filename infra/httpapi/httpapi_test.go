package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

type inner struct {
	Cpu  string `json:"cpu"`
	Name string `json:"name,omitempty"`
}

type request struct {
	Image     string            `json:"image"`
	Count     int               `json:"count"`
	Resources inner             `json:"resources"`
	Env       map[string]string `json:"env"`
	Mounts    []inner           `json:"mounts"`
	Slots     domain.Slots      `json:"slots"`
}

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		body  string
		field string // "" = success
	}{
		{`{"image":"x","count":2,"resources":{"cpu":"1"},"env":{"A":"b"},"mounts":[{"cpu":"1"}],"slots":{"cpu":"1"}}`, ""},
		{`{"image":"x","bogus":1}`, "bogus"},
		{`{"resources":{"cpu":"1","gpu":"2"}}`, "resources.gpu"},
		{`{"mounts":[{"cpu":"1"},{"nope":1}]}`, "mounts[1].nope"},
		{`{"count":"two"}`, "count"},
		{`{"image":5}`, "image"},
		{`{"slots":{"gpu":"1"}}`, "gpu"},
		{`{"slots":{"cpu":"-1"}}`, "cpu"},
		{`{"image":"x"} {"image":"y"}`, "body"},
		{`{"image":`, "body"},
		{``, "body"},
		{`[1,2]`, "body"},
	}
	for _, c := range cases {
		var r request
		err := DecodeJSON([]byte(c.body), &r)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Field != c.field {
			t.Errorf("%s: got %v (%#v), want invalid %q", c.body, err, de, c.field)
		}
	}
}

func newTestApp(t *testing.T) *fiber.App {
	t.Helper()
	app, err := New(Config{BodyLimit: 4096})
	if err != nil {
		t.Fatal(err)
	}
	auth := NewTokenAuth(map[string]Principal{"s3cret": {UserID: "admin", Role: "superadmin"}})
	app.Use(auth.Middleware)
	app.Post("/echo", func(c *fiber.Ctx) error {
		var r request
		if err := DecodeJSON(c.Body(), &r); err != nil {
			return err
		}
		p, _ := CurrentPrincipal(c)
		return c.JSON(map[string]string{"image": r.Image, "user": p.UserID})
	})
	app.Get("/missing", func(c *fiber.Ctx) error {
		return domain.Errorf("session.get", domain.KindNotFound, "session %s not found", "abc")
	})
	app.Get("/boom", func(c *fiber.Ctx) error { return errors.New("database password is hunter2") })
	app.Get("/full", func(c *fiber.Ctx) error {
		return fmt.Errorf("commands.update: %w", eventstore.StorageFull("eventstore/sqlite: commit", errors.New("/secret/path: database or disk is full")))
	})
	app.Use(NotFound)
	return app
}

func do(t *testing.T, app *fiber.App, method, path, token, body string) (int, http.Header, Problem, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p Problem
	if strings.HasPrefix(resp.Header.Get("Content-Type"), ProblemContentType) {
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("problem body %s: %v", raw, err)
		}
	}
	return resp.StatusCode, resp.Header, p, string(raw)
}

func TestServerProblems(t *testing.T) {
	app := newTestApp(t)

	status, hdr, _, body := do(t, app, "POST", "/echo", "s3cret", `{"image":"busybox"}`)
	if status != 200 || !strings.Contains(body, `"user":"admin"`) || hdr.Get(HeaderRequestID) == "" {
		t.Fatalf("ok request: %d %s", status, body)
	}

	status, _, p, _ := do(t, app, "POST", "/echo", "", `{}`)
	if status != 401 || p.Kind != "unauthenticated" || !strings.Contains(p.Detail, "missing Authorization") {
		t.Fatalf("no token: %d %+v", status, p)
	}
	status, _, p, _ = do(t, app, "POST", "/echo", "wrong", `{}`)
	if status != 401 || !strings.Contains(p.Detail, "unknown or revoked token") {
		t.Fatalf("bad token: %d %+v", status, p)
	}

	status, _, p, _ = do(t, app, "POST", "/echo", "s3cret", `{"image":"x","surprise":true}`)
	if status != 400 || p.Field != "surprise" || p.Type != "https://cairn.dev/problems/invalid" || p.RequestID == "" {
		t.Fatalf("unknown field: %d %+v", status, p)
	}

	status, _, p, _ = do(t, app, "GET", "/missing", "s3cret", "")
	if status != 404 || p.Kind != "not-found" || p.Instance != "/missing" {
		t.Fatalf("not found: %d %+v", status, p)
	}
	status, _, p, _ = do(t, app, "GET", "/no/such/route", "s3cret", "")
	if status != 404 {
		t.Fatalf("unknown route: %d %+v", status, p)
	}

	status, _, p, body = do(t, app, "GET", "/boom", "s3cret", "")
	if status != 500 || strings.Contains(body, "hunter2") {
		t.Fatalf("internal errors must not leak: %d %s", status, body)
	}

	// A full disk: 503 with the reason, when to try again, and no path.
	status, hdr, p, body = do(t, app, "GET", "/full", "s3cret", "")
	if status != 503 || p.Kind != "unavailable" || p.Detail != StorageFullDetail || hdr.Get("Retry-After") != RetryAfterUnavailable ||
		hdr.Get("Content-Type") != ProblemContentType || strings.Contains(body, "/secret/path") {
		t.Fatalf("full disk: %d %v %s", status, hdr, body)
	}
}

func TestProblemForJoinedErrors(t *testing.T) {
	err := errors.Join(domain.Invalid("s", "image", "required"), domain.Invalid("s", "resources.cpu", "must be positive"))
	p := ProblemFor(err)
	if p.Status != 400 || p.Field != "image" || len(p.Errors) != 2 || p.Errors[1].Field != "resources.cpu" {
		t.Fatalf("%+v", p)
	}
	for k, want := range map[domain.Kind]int{domain.KindConflict: 409, domain.KindForbidden: 403, domain.KindQuotaExceeded: 403, domain.KindUnavailable: 503, domain.KindInternal: 500} {
		if got := StatusOf(k); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", k, got, want)
		}
	}
}

// The body limit is enforced by the HTTP server itself, so this test talks
// to a real listener.
func TestBodyLimitOverRealServer(t *testing.T) {
	app := newTestApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/echo", strings.NewReader(`{"image":"`+strings.Repeat("x", 8192)+`"}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p Problem
	_ = json.Unmarshal(raw, &p)
	if resp.StatusCode != 413 || resp.Header.Get("Content-Type") != ProblemContentType || p.Kind != "too-large" {
		t.Fatalf("body over the limit: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
}
