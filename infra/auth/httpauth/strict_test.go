package httpauth

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// TestStrictReplaysAreRefusedAndCounted: over the real tenancy read model,
// a strict-mode request is served once and its replays are 401
// problem+json naming "replayed", counted in
// cairn_auth_replays_refused_total; a replay cache of 2 that a third
// request fills shrinks the window, refusing an older request as
// replay-window, and never holds more than 2.
func TestStrictReplaysAreRefusedAndCounted(t *testing.T) {
	t.Parallel()
	ak, sk, rm := keypair(t)
	reg := prometheus.NewRegistry()
	now := time.Now().Truncate(time.Second) // whole seconds: the dates sent are exact
	a, err := New(rm, Config{ReplayCacheSize: 2, Registerer: reg, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Use(a.Middleware)
	app.Get("/whoami", func(c *fiber.Ctx) error {
		p, _ := httpapi.CurrentPrincipal(c)
		return c.JSON(p)
	})
	send := func(req *http.Request) (int, httpapi.Problem) {
		t.Helper()
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var p httpapi.Problem
		if resp.StatusCode != http.StatusOK {
			if ct := resp.Header.Get("Content-Type"); ct != httpapi.ProblemContentType {
				t.Fatalf("%d with content type %q: %s", resp.StatusCode, ct, raw)
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, p
	}
	signedAt := func(at time.Time) *http.Request {
		req := httptest.NewRequest("GET", "/whoami", nil)
		if err := signing.SignHTTPStrict(req, ak, sk, "v8.20240915", at); err != nil {
			t.Fatal(err)
		}
		return req
	}
	// gathered reads the metrics as /metrics would: name{label} -> value.
	gathered := func() map[string]float64 {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				key := f.GetName()
				for _, l := range m.GetLabel() {
					key += "{" + l.GetValue() + "}"
				}
				if c := m.GetCounter(); c != nil {
					out[key] = c.GetValue()
				} else {
					out[key] = m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
	counted := func(reason string) float64 { return gathered()["cairn_auth_replays_refused_total{"+reason+"}"] }

	first := signedAt(now.Add(-time.Minute))
	if status, p := send(first.Clone(t.Context())); status != http.StatusOK {
		t.Fatalf("first: %d %+v", status, p)
	}
	for i := range 2 {
		status, p := send(first.Clone(t.Context()))
		if status != http.StatusUnauthorized || p.Kind != "unauthenticated" || !strings.Contains(p.Detail, "replayed") {
			t.Fatalf("replay %d: %d %+v", i+1, status, p)
		}
	}
	if counted("replayed") != 2 || counted("replay-window") != 0 {
		t.Fatalf("counted %v replayed, %v replay-window", counted("replayed"), counted("replay-window"))
	}

	// Two newer requests: the cache (size 2) evicts the first, its floor
	// rising to the first's date; a request signed before it is refused.
	for _, off := range []time.Duration{-30 * time.Second, -10 * time.Second} {
		if status, p := send(signedAt(now.Add(off))); status != http.StatusOK {
			t.Fatalf("%v: %d %+v", off, status, p)
		}
	}
	if status, p := send(first.Clone(t.Context())); status != http.StatusUnauthorized || !strings.Contains(p.Detail, "replay-window") {
		t.Fatalf("evicted replay: %d %+v", status, p)
	}
	if status, p := send(signedAt(now.Add(-2 * time.Minute))); status != http.StatusUnauthorized || !strings.Contains(p.Detail, "replay-window") {
		t.Fatalf("older than the window: %d %+v", status, p)
	}
	if counted("replay-window") != 2 || a.replay.Len() != 2 {
		t.Fatalf("counted %v replay-window, cache holds %d", counted("replay-window"), a.replay.Len())
	}
	// The gauges: 2 held; the window shrunk to the first's age (1 minute).
	if m := gathered(); m["cairn_auth_replay_cache_signatures"] != 2 || m["cairn_auth_replay_window_seconds"] != 60 {
		t.Fatalf("metrics %v", m)
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{MaxSkew: -1, CacheSize: -1, ReplayCacheSize: -1}.Validate()
	for _, want := range []string{"max skew", "cache size", "replay cache size"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not mention %q", err, want)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// keypair provisions a user with a keypair through the real commands and
// returns its keys and the tenancy read model holding them.
func keypair(t *testing.T) (accessKey, secretKey string, rm *tenancy.ReadModel) {
	t.Helper()
	ctx := context.Background()
	b := projectiontest.SQLite(t)
	rm = tenancy.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	run := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{PasswordHasher: password.Hasher{Params: password.CheapParams()}})
	if err != nil {
		t.Fatal(err)
	}
	root := commands.Principal{Role: domain.RoleSuperadmin, Domain: "d"}
	md := projectiontest.MD
	if _, err := h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: root, Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: root, Spec: domain.DomainSpec{Name: "d"}}); err != nil {
		t.Fatal(err)
	}
	u, err := h.CreateUser.Handle(ctx, md, commands.CreateUser{Actor: root, Spec: domain.UserSpec{Email: "s@example.com", Domain: "d"}, Password: "long enough"})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: root, UserID: u.UserID, ResourcePolicy: "p"})
	if err != nil {
		t.Fatal(err)
	}
	run.WaitFor(t, kp.Position)
	return kp.AccessKey, kp.SecretKey, rm
}

// TestStrictSigningOnly: with Config.StrictSigningOnly a Backend.AI-signed
// request is refused (401, unsupported-method) and a strict one served.
func TestStrictSigningOnly(t *testing.T) {
	t.Parallel()
	ak, sk, rm := keypair(t)
	a, err := New(rm, Config{StrictSigningOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Use(a.Middleware)
	app.Get("/whoami", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	for _, tc := range []struct {
		sign func(*http.Request, string, string, string, time.Time) error
		want int
	}{
		{signing.SignHTTP, http.StatusUnauthorized},
		{signing.SignHTTPStrict, http.StatusNoContent},
	} {
		req := httptest.NewRequest("GET", "/whoami", nil)
		if err := tc.sign(req, ak, sk, "v8.20240915", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == http.StatusUnauthorized && !strings.Contains(string(raw), "unsupported-method")) {
			t.Fatalf("%s: %d %s, want %d", req.Header.Get("Authorization")[:40], resp.StatusCode, raw, tc.want)
		}
	}
}
