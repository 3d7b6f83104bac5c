package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The prefix the app proxy strips before the terminal page sees a request.
const terminalPrefix = "/v1/sessions/0190d7a2-0000-7000-8000-000000000000/apps/terminal"

func serve(t *testing.T, h http.Handler, method, target string, header ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

var terminalRef = regexp.MustCompile(`"(assets/terminal-[0-9a-f]{12}\.(js|css))"`)

// The terminal's page, mounted under a session's terminal path as the app
// proxy mounts it: the page with its own CSP, never cached; its two assets
// found relative to the page's URL, cached for good; nothing else.
func TestTerminalPage(t *testing.T) {
	h := http.StripPrefix(terminalPrefix, TerminalPage())
	pageURL := "http://proxy.example" + terminalPrefix + "/"
	res, page := serve(t, h, "GET", pageURL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(page, `id="terminal"`) {
		t.Fatalf("page: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), page)
	}
	if res.Header.Get("Content-Security-Policy") != TerminalContentSecurityPolicy || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("page headers: %v", res.Header)
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "style=") {
		t.Fatal("terminal.html must have no inline script or style")
	}
	if res, _ := serve(t, h, "GET", pageURL, "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
		t.Fatalf("page with its ETag: %d", res.StatusCode)
	}
	if res, body := serve(t, h, "HEAD", pageURL); res.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD: %d %q", res.StatusCode, body)
	}

	refs := terminalRef.FindAllStringSubmatch(page, -1)
	if len(refs) != 2 {
		t.Fatalf("terminal.html loads %v, want one script and one stylesheet, relative to the page", refs)
	}
	base, _ := url.Parse(pageURL)
	for _, ref := range refs {
		u := base.ResolveReference(&url.URL{Path: ref[1]})
		res, body := serve(t, h, "GET", u.String())
		want := map[string]string{"js": "text/javascript", "css": "text/css"}[ref[2]]
		if res.StatusCode != 200 || len(body) == 0 || !strings.HasPrefix(res.Header.Get("Content-Type"), want) ||
			!strings.Contains(res.Header.Get("Cache-Control"), "immutable") || res.Header.Get("Content-Security-Policy") != TerminalContentSecurityPolicy {
			t.Fatalf("%s: %d %v", u.Path, res.StatusCode, res.Header)
		}
		if res, _ := serve(t, h, "GET", u.String(), "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
			t.Fatalf("%s with its ETag: %d", u.Path, res.StatusCode)
		}
	}

	// The Web-UI's own files, and anything else, are not the terminal's.
	ui, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for p := range ui.assets {
		if res, _ := serve(t, h, "GET", "http://proxy.example"+terminalPrefix+p); res.StatusCode != http.StatusNotFound {
			t.Fatalf("the Web-UI's %s through the terminal page: %d", p, res.StatusCode)
		}
	}
	for _, p := range []string{"/index.html", "/terminal.html", "/socket", "/assets/", "/assets/terminal-000000000000.js", "/sessions"} {
		if res, _ := serve(t, h, "GET", "http://proxy.example"+terminalPrefix+p); res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", p, res.StatusCode)
		}
	}
	if res, _ := serve(t, h, "POST", pageURL); res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %d %v", res.StatusCode, res.Header)
	}
}

// The terminal's policy differs from the Web-UI's only in allowing
// inline styles (xterm.js adds <style> elements); scripts, connections,
// images and fonts stay the site's own.
func TestTerminalContentSecurityPolicy(t *testing.T) {
	directives := func(csp string) map[string]string {
		out := map[string]string{}
		for _, d := range strings.Split(csp, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			out[name] = value
		}
		return out
	}
	app, term := directives(ContentSecurityPolicy), directives(TerminalContentSecurityPolicy)
	if len(app) != len(term) {
		t.Fatalf("directives differ: %v vs %v", app, term)
	}
	for name, v := range app {
		want := v
		if name == "style-src" {
			want = "'self' 'unsafe-inline'"
		}
		if term[name] != want {
			t.Errorf("%s: %q, want %q", name, term[name], want)
		}
	}
}

// The Web-UI does not serve the terminal's assets: they are the proxy's.
func TestUIHasNoTerminalAssets(t *testing.T) {
	ui, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := newTerminalPage(dist)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.assets) != 2 {
		t.Fatalf("the terminal's assets: %d, want a script and a stylesheet", len(tp.assets))
	}
	app := testApp(t)
	for p := range tp.assets {
		if _, ok := ui.assets[p]; ok {
			t.Fatalf("the Web-UI serves the terminal's %s", p)
		}
		if res, _ := get(t, app, p); res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s from the Web-UI: %d", p, res.StatusCode)
		}
	}
}
