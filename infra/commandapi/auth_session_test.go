package commandapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/auth/httpauth"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// browser sends a request as the Web-UI does: the login cookie, and the
// given extra headers (the CSRF token, Origin...).
func (e *env) browser(t *testing.T, method, path, cookie, body string, header map[string]string) response {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: httpauth.CookieName, Value: cookie})
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return e.send(t, req)
}

// The Web-UI's login: a cookie the page's scripts cannot read, a CSRF
// token every cookie-authenticated write must carry, log out.
func TestWebSessionCookieAndCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[aliceToken]

	r := e.do(t, "POST", "/v1/auth/session", "", `{"email":"alice@example.com","password":"`+alice.Password+`"}`)
	var out struct {
		CSRFToken string    `json:"csrf_token"`
		ExpiresAt time.Time `json:"expires_at"`
		UserID    string    `json:"user_id"`
		Token     string    `json:"token"`
	}
	r.decode(t, &out)
	if r.status != http.StatusOK || out.UserID != alice.ID.String() || out.CSRFToken == "" {
		t.Fatalf("web login: %d %s", r.status, r.body)
	}
	if out.Token != "" || strings.Contains(string(r.body), "cairn_l_") {
		t.Fatalf("the login token must stay out of the page's reach, the body has it: %s", r.body)
	}
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("Set-Cookie: %v", r.header.Values("Set-Cookie"))
	}
	ck := cookies[0]
	raw := r.header.Get("Set-Cookie")
	if ck.Name != httpauth.CookieName || !strings.HasPrefix(ck.Value, "cairn_l_") || !ck.HttpOnly ||
		ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
		t.Fatalf("cookie %q", raw)
	}
	if d := ck.Expires.Sub(out.ExpiresAt); d < -time.Second || d > time.Second {
		t.Fatalf("the cookie expires %v, the token %v", ck.Expires, out.ExpiresAt)
	}
	if httpauth.CSRFToken(ck.Value) != out.CSRFToken {
		t.Fatal("the CSRF token is not the one derived from the cookie")
	}

	// Reads work with the cookie alone and hand the CSRF token back (a
	// reloaded page learns it so).
	r = e.browser(t, "GET", "/v1/auth/whoami", ck.Value, "", nil)
	var p httpapi.Principal
	r.decode(t, &p)
	if r.status != http.StatusOK || p.UserID != alice.ID.String() || p.Method != httpapi.MethodCookie {
		t.Fatalf("whoami by cookie: %d %s", r.status, r.body)
	}
	if r.header.Get(httpauth.CSRFHeader) != out.CSRFToken {
		t.Fatalf("a cookie-authenticated answer must carry the CSRF token, got %q", r.header.Get(httpauth.CSRFHeader))
	}

	// Writes need the CSRF token, and the request's own origin.
	create := `{"description":"from the browser"}`
	for name, h := range map[string]map[string]string{
		"no token":     nil,
		"wrong token":  {httpauth.CSRFHeader: "x" + out.CSRFToken},
		"cross origin": {httpauth.CSRFHeader: out.CSRFToken, "Origin": "https://evil.example"},
		"cross site":   {httpauth.CSRFHeader: out.CSRFToken, "Sec-Fetch-Site": "cross-site"},
	} {
		if r := e.browser(t, "POST", "/v1/auth/tokens", ck.Value, create, h); r.status != http.StatusForbidden || !strings.Contains(r.problem(t).Detail, "refused") && !strings.Contains(r.problem(t).Detail, "CSRF") {
			t.Errorf("%s: %d %s, want 403", name, r.status, r.body)
		}
	}
	if r := e.browser(t, "POST", "/v1/auth/tokens", ck.Value, create, map[string]string{httpauth.CSRFHeader: out.CSRFToken, "Origin": "http://example.com"}); r.status != http.StatusCreated {
		t.Fatalf("a write with the CSRF token from the API's own origin: %d %s", r.status, r.body)
	}
	// A Bearer token in the header needs no CSRF token: no browser sends
	// it on its own.
	if r := e.do(t, "POST", "/v1/auth/tokens", aliceToken, create); r.status != http.StatusCreated {
		t.Fatalf("bearer write: %d %s", r.status, r.body)
	}

	// Log out: the token stops working and the cookie is cleared.
	if r := e.browser(t, "DELETE", "/v1/auth/session", ck.Value, "", nil); r.status != http.StatusForbidden {
		t.Fatalf("log out without the CSRF token: %d %s", r.status, r.body)
	}
	r = e.browser(t, "DELETE", "/v1/auth/session", ck.Value, "", map[string]string{httpauth.CSRFHeader: out.CSRFToken})
	if r.status != http.StatusNoContent {
		t.Fatalf("log out: %d %s", r.status, r.body)
	}
	if c := (&http.Response{Header: r.header}).Cookies(); len(c) != 1 || c[0].Value != "" || c[0].MaxAge >= 0 && !c[0].Expires.Before(time.Now()) {
		t.Fatalf("log out must clear the cookie: %v", r.header.Values("Set-Cookie"))
	}
	refused(t, e.browser(t, "GET", "/v1/auth/whoami", ck.Value, "", nil), "unknown or revoked token")

	// Expiry: a new login's cookie stops working when its token expires.
	r = e.do(t, "POST", "/v1/auth/session", "", `{"email":"alice@example.com","password":"`+alice.Password+`"}`)
	ck = (&http.Response{Header: r.header}).Cookies()[0]
	e.clock.Advance(12*time.Hour + time.Minute)
	refused(t, e.browser(t, "GET", "/v1/auth/whoami", ck.Value, "", nil), "token expired")

	// A wrong password sets no cookie.
	r = e.do(t, "POST", "/v1/auth/session", "", `{"email":"alice@example.com","password":"wrong"}`)
	if r.status != http.StatusUnauthorized || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("bad login: %d %v", r.status, r.header.Values("Set-Cookie"))
	}
	// Log out needs a login token.
	if r := e.do(t, "DELETE", "/v1/auth/session", "", ""); r.status != http.StatusUnauthorized {
		t.Fatalf("log out without credentials: %d", r.status)
	}
}
