package appproxy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/appproxy"
)

const testDomain = "apps.example.test"

// newHostEnv is newEnv with the subdomain mode on: every host name
// reaches the proxy (as a DNS wildcard would), the opener links to the
// apps' own hosts.
func newHostEnv(t *testing.T) (*env, *http.Client) {
	t.Helper()
	e := &env{t: t, routes: &routes{session: uuid.New(), kernel: uuid.New()}, user: uuid.New(), now: time.Now()}
	key := make([]byte, appproxy.KeySize)
	keys, err := appproxy.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	e.keys = keys
	agent := e.startAgent()
	p, err := appproxy.New(appproxy.Config{
		Keys: keys, Routes: e.routes, Agents: addresses{"a1": agent},
		Sign: func(req *http.Request, agentID string) error {
			req.Header.Set("Cairn-Manager-Signature", agentID+" "+req.Method+" "+req.URL.RequestURI())
			return nil
		},
		Record:        func(context.Context, audit.Record) error { return nil },
		ActivityEvery: time.Hour,
		Domain:        testDomain,
		Now:           e.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.proxy = httptest.NewServer(p)
	t.Cleanup(e.proxy.Close)
	base, _ := url.Parse(e.proxy.URL)
	e.opener = appproxy.Opener{Keys: keys, PublicURL: base, Domain: testDomain, Now: e.clock}
	c := browser(t)
	c.Transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, base.Host)
	}}
	return e, c
}

func (e *env) hostURL(session uuid.UUID, app, path string) string {
	label, ok := appproxy.HostLabel(session, app)
	if !ok {
		e.t.Fatalf("no host label for %s", app)
	}
	base, _ := url.Parse(e.proxy.URL)
	return "http://" + label + "." + testDomain + ":" + base.Port() + path
}

func TestHostLabel(t *testing.T) {
	s := uuid.MustParse("0b9d3c1e-58f2-4a3e-9d55-1f6f0a6c2b7d")
	for _, tc := range []struct {
		app  string
		want string
		ok   bool
	}{
		{"port-8080", "port-8080--0b9d3c1e58f24a3e9d551f6f0a6c2b7d", true},
		{"vscode", "vscode--0b9d3c1e58f24a3e9d551f6f0a6c2b7d", true},
		{"Jupyter", "", false}, // DNS names are not case-sensitive
		{"my_app", "", false},  // not a DNS label
		{"-x", "", false},      // a label starts with a letter or digit
		{strings.Repeat("a", 29), strings.Repeat("a", 29) + "--0b9d3c1e58f24a3e9d551f6f0a6c2b7d", true},
		{strings.Repeat("a", 30), "", false}, // over 63 bytes
		{appproxy.TerminalApp, "", false},    // the terminal stays on the proxy's own host
	} {
		got, ok := appproxy.HostLabel(s, tc.app)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HostLabel(%q) = %q, %v; want %q, %v", tc.app, got, ok, tc.want, tc.ok)
		}
	}
	for _, d := range []string{"apps.example.com", "a.b"} {
		if err := appproxy.CheckDomain(d); err != nil {
			t.Errorf("CheckDomain(%q): %v", d, err)
		}
	}
	for _, d := range []string{"", "localhost", "Apps.example.com", "apps..example.com", "*.example.com", "127.0.0.1:80"} {
		if appproxy.CheckDomain(d) == nil {
			t.Errorf("CheckDomain(%q) accepted", d)
		}
	}
}

// A pre-opened port's app on its own host gets the path as it is, with
// no prefix to know of; the ticket becomes a cookie of that host only.
func TestHostModeServesTheAppAtItsRoot(t *testing.T) {
	e, c := newHostEnv(t)
	link, err := e.opener.Open(e.user, e.routes.session, "port-9000")
	if err != nil {
		t.Fatal(err)
	}
	if want := e.hostURL(e.routes.session, "port-9000", "/?cairn_ticket="); !strings.HasPrefix(link.URL, want) {
		t.Fatalf("link %s, want it on %s", link.URL, want)
	}
	res, err := c.Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := "app says /kernels/" + e.routes.kernel.String() + "/apps/9000/"; res.StatusCode != http.StatusOK || string(body) != want {
		t.Fatalf("through the link: %d %q, want 200 %q", res.StatusCode, body, want)
	}
	if got := e.lastSeen().Header.Get("X-Forwarded-Prefix"); got != "" {
		t.Errorf("X-Forwarded-Prefix %q sent to an app at its root", got)
	}
	var setCookie string
	for r := res; r != nil; r = r.Request.Response {
		if v := r.Header.Get("Set-Cookie"); strings.HasPrefix(v, appproxy.CookieName+"=") {
			setCookie = v
		}
	}
	if !strings.Contains(setCookie, "Path=/;") || strings.Contains(strings.ToLower(setCookie), "domain=") {
		t.Errorf("the app cookie %q: want Path=/ and no Domain (host-only)", setCookie)
	}
	// A redirect within the app's root stays within it: no prefix added.
	res, err = c.Get(e.hostURL(e.routes.session, "port-9000", "/login"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Request.URL.Path; got != "/home" {
		t.Errorf("the app's redirect to /home led to %s", got)
	}
}

// An image's app (started with its path prefix as base path) is sent its
// requests under that prefix, whether the browser asks for the host's
// root or for a link the app made with its base path.
func TestHostModeKeepsAnImageAppsBasePath(t *testing.T) {
	e, c := newHostEnv(t)
	link, err := e.opener.Open(e.user, e.routes.session, "web")
	if err != nil {
		t.Fatal(err)
	}
	prefix := appproxy.AppPath(e.routes.session, "web")
	for _, u := range []string{link.URL, e.hostURL(e.routes.session, "web", "/x?y=1"), e.hostURL(e.routes.session, "web", prefix+"static/a.js")} {
		res, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.HasPrefix(string(body), "app says /kernels/"+e.routes.kernel.String()+"/apps/8080"+prefix) {
			t.Errorf("GET %s: %d %q, want the app's path under %s", u, res.StatusCode, body, prefix)
		}
		if got := e.lastSeen().Header.Get("X-Forwarded-Prefix"); got != prefix {
			t.Errorf("X-Forwarded-Prefix %q, want %q", got, prefix)
		}
	}
}

// The cookie of one app's host opens nothing on another app's host, on
// another session's, or under a name that is no app's.
func TestHostModeCookieIsForItsHostOnly(t *testing.T) {
	e, c := newHostEnv(t)
	link, err := e.opener.Open(e.user, e.routes.session, "port-9000")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	home, _ := url.Parse(e.hostURL(e.routes.session, "port-9000", "/"))
	var grant *http.Cookie
	for _, ck := range c.Jar.Cookies(home) {
		if ck.Name == appproxy.CookieName {
			grant = ck
		}
	}
	if res.StatusCode != http.StatusOK || grant == nil {
		t.Fatalf("through the link: %d, no app cookie", res.StatusCode)
	}
	base, _ := url.Parse(e.proxy.URL)
	for _, other := range []string{
		e.hostURL(e.routes.session, "web", "/"),
		e.hostURL(uuid.New(), "port-9000", "/"),
		"http://nothing." + testDomain + ":" + base.Port() + "/",
		"http://port-9000--" + strings.Repeat("0", 31) + "." + testDomain + ":" + base.Port() + "/",
	} {
		req, _ := http.NewRequest(http.MethodGet, other, nil)
		req.AddCookie(grant)
		plain := &http.Client{Transport: c.Transport}
		res, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s with another host's cookie: %d, want 404", other, res.StatusCode)
		}
	}
	// The proxy's own host still serves the paths.
	res, err = (&http.Client{}).Get(e.proxy.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("the proxy's own host: /healthz %d", res.StatusCode)
	}
}
