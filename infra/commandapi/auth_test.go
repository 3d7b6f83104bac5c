package commandapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const apiVersion = "v8.20240915"

// signed sends a request signed with a keypair at the given time
// (signing.SignHTTP, as a Backend.AI client does).
func (e *env) signed(t *testing.T, method, path, accessKey, secretKey, body string, at time.Time) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := signing.SignHTTP(req, accessKey, secretKey, apiVersion, at); err != nil {
		t.Fatal(err)
	}
	return e.send(t, req)
}

func (e *env) send(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// refused checks a 401 whose detail says why.
func refused(t *testing.T, r response, why string) {
	t.Helper()
	if r.status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 (%s): %s", r.status, why, r.body)
	}
	if p := r.problem(t); p.Kind != "unauthenticated" || !strings.Contains(p.Detail, why) {
		t.Fatalf("401 detail %q does not say %q", p.Detail, why)
	}
}

func TestSignedRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[aliceToken]
	now := time.Now()

	r := e.signed(t, "GET", "/v1/auth/whoami", alice.AccessKey, alice.SecretKey, "", now)
	var p httpapi.Principal
	r.decode(t, &p)
	if r.status != http.StatusOK || p.UserID != alice.ID.String() || p.AccessKey != alice.AccessKey || p.Role != "user" ||
		p.Domain != "default" || p.Method != httpapi.MethodSignature || strings.Join(p.Projects, ",") != "default" || p.Email != alice.Email {
		t.Fatalf("whoami: %d %+v", r.status, p)
	}
	// A query string and a JSON body are covered as sent.
	if r := e.signed(t, "GET", "/v1/sessions?limit=5&status=PENDING", alice.AccessKey, alice.SecretKey, "", now); r.status != http.StatusOK {
		t.Fatalf("signed GET with a query: %d %s", r.status, r.body)
	}
	if r := e.signed(t, "POST", "/v1/sessions", alice.AccessKey, alice.SecretKey, validBody, now); r.status != http.StatusCreated {
		t.Fatalf("signed POST: %d %s", r.status, r.body)
	}
	// Dates up to (but not) 15 minutes away are accepted.
	if r := e.signed(t, "GET", "/v1/agents", alice.AccessKey, alice.SecretKey, "", now.Add(-14*time.Minute)); r.status != http.StatusOK {
		t.Fatalf("14 minutes behind: %d %s", r.status, r.body)
	}

	refused(t, e.signed(t, "GET", "/v1/agents", alice.AccessKey, e.users[bobToken].SecretKey, "", now), "bad-signature")
	refused(t, e.signed(t, "GET", "/v1/agents", alice.AccessKey, alice.SecretKey, "", now.Add(-20*time.Minute)), "date-skew")
	refused(t, e.signed(t, "GET", "/v1/agents", alice.AccessKey, alice.SecretKey, "", now.Add(16*time.Minute)), "date-skew")
	refused(t, e.signed(t, "GET", "/v1/agents", "AKIAAAAAAAAAAAAAAAAA", alice.SecretKey, "", now), "unknown-key")

	// The signature covers the path: a request sent elsewhere fails.
	req := httptest.NewRequest("GET", "/v1/agents", nil)
	if err := signing.SignHTTP(req, alice.AccessKey, alice.SecretKey, apiVersion, now); err != nil {
		t.Fatal(err)
	}
	req.URL.Path, req.RequestURI = "/v1/sessions", "/v1/sessions"
	refused(t, e.send(t, req), "bad-signature")
	// And the host it was signed for.
	req = httptest.NewRequest("GET", "/v1/agents", nil)
	if err := signing.SignHTTP(req, alice.AccessKey, alice.SecretKey, apiVersion, now); err != nil {
		t.Fatal(err)
	}
	req.Host = "elsewhere.example.com"
	refused(t, e.send(t, req), "bad-signature")
	// Malformed headers.
	req = httptest.NewRequest("GET", "/v1/agents", nil)
	req.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256")
	refused(t, e.send(t, req), "missing-credential")

	// A deactivated keypair, a rotated secret, an inactive owner.
	ctx := context.Background()
	second, err := e.handlers.IssueKeypair.Handle(ctx, testMD, commands.IssueKeypair{Actor: system, UserID: alice.ID, ResourcePolicy: "default"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, second.Position)
	if r := e.signed(t, "GET", "/v1/agents", second.AccessKey, second.SecretKey, "", now); r.status != http.StatusOK {
		t.Fatalf("second keypair: %d %s", r.status, r.body)
	}
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.SetKeypairActive.Handle(ctx, testMD, commands.SetKeypairActive{Actor: system, AccessKey: second.AccessKey, Active: false})
	})
	refused(t, e.signed(t, "GET", "/v1/agents", second.AccessKey, second.SecretKey, "", now), "inactive-key")

	bob := e.users[bobToken]
	rot, err := e.handlers.RotateKeypairSecret.Handle(ctx, testMD, commands.RotateKeypairSecret{Actor: system, AccessKey: bob.AccessKey})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, rot.Position)
	refused(t, e.signed(t, "GET", "/v1/agents", bob.AccessKey, bob.SecretKey, "", now), "bad-signature")
	if r := e.signed(t, "GET", "/v1/agents", bob.AccessKey, rot.SecretKey, "", now); r.status != http.StatusOK {
		t.Fatalf("rotated secret: %d %s", r.status, r.body)
	}
	inactive := domain.UserInactive
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyUser.Handle(ctx, testMD, commands.ModifyUser{Actor: system, UserID: bob.ID, Changes: domain.UserChanges{Status: &inactive}})
	})
	refused(t, e.signed(t, "GET", "/v1/agents", bob.AccessKey, rot.SecretKey, "", now), "not an active user")
	refused(t, e.do(t, "GET", "/v1/agents", bobToken, ""), "not an active user")
}

func TestAuthenticationRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, c := range []struct{ header, why string }{
		{"", "missing Authorization header"},
		{"Basic YWxpY2U6cGFzcw==", "unsupported Authorization scheme"},
		{"Bearer nonsense", "not a Cairn token"},
		{"Bearer cairn_b_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "unknown or revoked token"},
		{"Bearer " + strings.Replace(e.users[aliceToken].Token, "cairn_b_", "cairn_l_", 1), "unknown or revoked token"},
	} {
		req := httptest.NewRequest("GET", "/v1/agents", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		refused(t, e.send(t, req), c.why)
	}
}

func TestBearerTokensExpireAndAreRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	// A script token for oneself: bounded lifetime, usable at once.
	for _, body := range []string{`{"ttl":10}`, `{"ttl":999999999}`, `{"ttl":"long"}`, `{"ttl":600,"scope":"x"}`} {
		r := e.do(t, "POST", "/v1/auth/tokens", aliceToken, body)
		if p := r.problem(t); r.status != http.StatusBadRequest || (p.Field != "ttl" && p.Field != "scope") {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
	}
	r := e.do(t, "POST", "/v1/auth/tokens", aliceToken, `{"ttl":600,"description":"ci"}`)
	var issued struct {
		ID        string    `json:"id"`
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	r.decode(t, &issued)
	if r.status != http.StatusCreated || !strings.HasPrefix(issued.Token, "cairn_b_") {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	if r := e.do(t, "GET", "/v1/auth/whoami", issued.Token, ""); r.status != http.StatusOK {
		t.Fatalf("a fresh token: %d %s", r.status, r.body)
	}
	// Listed without the token itself.
	r = e.do(t, "GET", "/v1/auth/tokens", aliceToken, "")
	if r.status != http.StatusOK || strings.Contains(string(r.body), issued.Token) || !strings.Contains(string(r.body), issued.ID) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}

	// Expiry: ten minutes later the script token and, after an hour, the
	// seeded token are refused.
	e.clock.Advance(11 * time.Minute)
	refused(t, e.do(t, "GET", "/v1/auth/whoami", issued.Token, ""), "token expired")
	if r := e.do(t, "GET", "/v1/auth/whoami", aliceToken, ""); r.status != http.StatusOK {
		t.Fatalf("the hour-long token: %d %s", r.status, r.body)
	}
	e.clock.Advance(time.Hour)
	refused(t, e.do(t, "GET", "/v1/auth/whoami", aliceToken, ""), "token expired")

	// Revocation takes effect with the answer.
	fresh := e.issueToken(t, e.users[bobToken].ID, time.Hour)
	e.wait(t, e.last)
	r = e.do(t, "GET", "/v1/auth/whoami", fresh, "")
	var p httpapi.Principal
	r.decode(t, &p)
	if r.status != http.StatusOK || p.Method != httpapi.MethodToken || p.TokenID == "" {
		t.Fatalf("whoami: %d %s", r.status, r.body)
	}
	if r := e.do(t, "DELETE", "/v1/auth/tokens/"+p.TokenID, fresh, ""); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	refused(t, e.do(t, "GET", "/v1/auth/whoami", fresh, ""), "unknown or revoked token")
}

func TestLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[aliceToken]
	login := func(body string) response { t.Helper(); return e.do(t, "POST", "/v1/auth/login", "", body) }

	r := login(`{"email":"ALICE@example.com","password":"` + alice.Password + `"}`)
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
		UserID    string    `json:"user_id"`
		Role      string    `json:"role"`
	}
	r.decode(t, &out)
	if r.status != http.StatusOK || !strings.HasPrefix(out.Token, "cairn_l_") || out.UserID != alice.ID.String() || out.Role != "user" {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	if d := time.Until(out.ExpiresAt); d < 11*time.Hour || d > 13*time.Hour {
		t.Errorf("a login token lives %s, want 12h", d)
	}
	if r := e.do(t, "GET", "/v1/sessions", out.Token, ""); r.status != http.StatusOK {
		t.Fatalf("the login token at once: %d %s", r.status, r.body)
	}

	// The same answer for a wrong password and an unknown address.
	refused(t, login(`{"email":"alice@example.com","password":"wrong password"}`), "wrong e-mail address or password")
	refused(t, login(`{"email":"nobody@example.com","password":"wrong password"}`), "wrong e-mail address or password")
	for body, field := range map[string]string{`{"password":"x"}`: "email", `{"email":"a@b.c"}`: "password", `{"email":"a@b.c","password":"x","otp":1}`: "otp"} {
		if r := login(body); r.status != http.StatusBadRequest || r.problem(t).Field != field {
			t.Errorf("%s: %d %s, want 400 naming %s", body, r.status, r.body, field)
		}
	}

	// An inactive account cannot log in.
	inactive := domain.UserInactive
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyUser.Handle(ctx, testMD, commands.ModifyUser{Actor: system, UserID: e.users[bobToken].ID, Changes: domain.UserChanges{Status: &inactive}})
	})
	refused(t, login(`{"email":"bob@example.com","password":"`+e.users[bobToken].Password+`"}`), "account is inactive")

	// Login tokens expire.
	e.clock.Advance(12*time.Hour + time.Minute)
	refused(t, e.do(t, "GET", "/v1/sessions", out.Token, ""), "token expired")
}

// A hash made with other parameters than the server's is replaced at the
// next successful login.
func TestLoginRehashes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{passwords: password.Params{Memory: 128, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}})
	alice := e.users[aliceToken]
	r := e.do(t, "POST", "/v1/auth/login", "", `{"email":"alice@example.com","password":"`+alice.Password+`"}`)
	var out struct {
		Position uint64 `json:"position"`
	}
	r.decode(t, &out)
	if r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	recs, err := e.store.ReadStream(context.Background(), domain.UserStream(alice.ID).String(), eventstoreAll)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Type != domain.TypeUserPasswordChanged || last.Position > out.Position {
		t.Fatalf("last event of the user %s at %d (login at %d)", last.Type, last.Position, out.Position)
	}
	var ev domain.UserPasswordChanged
	if err := json.Unmarshal(last.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if ok, err := password.Verify(alice.Password, ev.PasswordHash); !ok || err != nil {
		t.Fatalf("the new hash does not verify: %v %v", ok, err)
	}
	// The password still works.
	if r := e.do(t, "POST", "/v1/auth/login", "", `{"email":"alice@example.com","password":"`+alice.Password+`"}`); r.status != http.StatusOK {
		t.Fatalf("login after the rehash: %d %s", r.status, r.body)
	}
}
