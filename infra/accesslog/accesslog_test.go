package accesslog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const token = "t0ken"

type fixture struct {
	store  *sqlite.Store
	app    *fiber.App
	writer *accesslog.Writer
	stop   func()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, accesslog.Config{})
}

// newFixtureWith is newFixture with the Writer configured by cfg (its
// logger is set here).
func newFixtureWith(t *testing.T, cfg accesslog.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h, err := commands.NewHandlers(store, time.Now, commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = logger
	w, err := accesslog.NewWriter(cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("writer: %v", err)
		}
	}

	app, err := httpapi.New(httpapi.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app.Use(accesslog.Middleware(w, nil))
	auth := httpapi.NewTokenAuth(map[string]httpapi.Principal{token: {UserID: "u1", AccessKey: "AKIA1", Role: "user", Domain: "default"}})
	v1 := app.Group("/v1", auth.Middleware)
	v1.Get("/sessions/:id", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"id": c.Params("id")}) })
	v1.Post("/sessions", func(c *fiber.Ctx) error {
		spec := domain.SessionSpec{
			Name: "s", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"}, Domain: "default", Project: "p", ResourceGroup: "default",
			Type: domain.SessionBatch, Image: c.Query("image"), Command: "true",
			Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)},
		}
		res, err := h.RequestSession.Handle(c.UserContext(), commands.Metadata{Actor: "u1", Access: accesslog.Carry(c, commands.NewAccess)}, commands.RequestSession{Spec: spec})
		if err != nil {
			return err
		}
		return c.Status(http.StatusCreated).JSON(fiber.Map{"id": res.SessionID})
	})
	return &fixture{store: store, app: app, writer: w, stop: stop}
}

func (f *fixture) do(t *testing.T, method, path, tok string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set(httpapi.HeaderRequestID, "req-"+strings.ReplaceAll(method+path, "/", "_"))
	resp, err := f.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// records returns the unchained access records of a stream, in order.
func records(t *testing.T, s eventstore.Store, stream string) []audit.Record {
	t.Helper()
	evs, err := s.ReadStream(context.Background(), stream, eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, e := range evs {
		if e.Type != domain.TypeAccessLogged && e.Type != domain.TypeAccessBatchLogged {
			continue
		}
		ev, err := domain.DecodeEvent(e.Type, e.Version, e.Data)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := domain.AccessRecords(ev)
		out = append(out, recs...)
	}
	return out
}

// TestWriterSplitsLargeBatches: a batch larger than one event's budget is
// written as several events of one append, every record once, in order.
func TestWriterSplitsLargeBatches(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w, err := accesslog.NewWriter(accesslog.Config{MaxBatch: 4096, Logger: slog.New(slog.DiscardHandler)}, store)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		rec := audit.Record{Time: time.Now(), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200,
			RequestID: fmt.Sprintf("%06d-%s", i, strings.Repeat("x", 200))}
		if err := w.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	cancel() // Run flushes what is queued and returns.
	if err := w.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	evs, err := store.ReadStream(ctx, domain.AccessLogStream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 2 {
		t.Fatalf("%d records in %d events; want them split", n, len(evs))
	}
	for _, e := range evs {
		if len(e.Data) > domain.AuditPayloadBytes {
			t.Errorf("event %d holds %d bytes, over %d", e.Revision, len(e.Data), domain.AuditPayloadBytes)
		}
	}
	got := records(t, store, domain.AccessLogStream)
	if len(got) != n {
		t.Fatalf("%d records stored, want %d", len(got), n)
	}
	for i, r := range got {
		if want := fmt.Sprintf("%06d-", i); !strings.HasPrefix(r.RequestID, want) {
			t.Fatalf("record %d is %s", i, r.RequestID[:7])
		}
	}
}

func TestEveryRequestIsRecorded(t *testing.T) {
	f := newFixture(t)
	if got := f.do(t, http.MethodGet, "/v1/sessions/abc", token); got != 200 {
		t.Fatalf("GET = %d", got)
	}
	if got := f.do(t, http.MethodGet, "/v1/sessions/abc", "wrong"); got != 401 {
		t.Fatalf("GET with a bad token = %d", got)
	}
	if got := f.do(t, http.MethodPost, "/v1/sessions", token); got != 400 { // no image
		t.Fatalf("bad POST = %d", got)
	}
	if got := f.do(t, http.MethodPost, "/v1/sessions?image=busybox", token); got != 201 {
		t.Fatalf("POST = %d", got)
	}
	f.stop() // flushes the queue

	logged := records(t, f.store, domain.AccessLogStream)
	type row struct {
		action, entity, id, user string
		outcome                  string
		status                   int
	}
	var got []row
	for _, r := range logged {
		got = append(got, row{r.Action, r.EntityType, r.EntityID, r.UserID, string(r.Outcome), r.Status})
		if r.RequestID == "" || r.Time.IsZero() || r.Duration < 0 || r.ClientIP == "" {
			t.Errorf("incomplete record %+v", r)
		}
	}
	want := []row{
		{"GET /v1/sessions/:id", "session", "abc", "u1", "success", 200},
		{"GET /v1/sessions/abc", "session", "abc", "", "denied", 401},
		{"POST /v1/sessions", "session", "", "u1", "error", 400},
	}
	if len(got) != len(want) {
		t.Fatalf("access-log records:\n got %v\nwant %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}

	// The successful POST's record is in its session's stream, with its events.
	evs, err := f.store.ReadAll(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var inline []audit.Record
	for _, e := range evs {
		if s, err := domain.ParseStream(e.Stream); err == nil && s.Kind == domain.StreamSession && e.Type == domain.TypeAccessLogged {
			inline = append(inline, records(t, f.store, e.Stream)...)
		}
	}
	if len(inline) != 1 || inline[0].Action != "POST /v1/sessions" || inline[0].Status != 201 || inline[0].EntityType != "session" || inline[0].Outcome != "success" {
		t.Fatalf("inline records = %+v", inline)
	}
}
