package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func testApp(t *testing.T) *fiber.App {
	t.Helper()
	ui, err := New()
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Get("/v1/auth/whoami", func(c *fiber.Ctx) error { return c.SendString("api") })
	ui.Mount(app)
	app.Use(func(c *fiber.Ctx) error { return c.Status(http.StatusNotFound).SendString("no route") })
	return app
}

func get(t *testing.T, app *fiber.App, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

var assetRef = regexp.MustCompile(`/assets/app-[0-9a-f]{12}\.(js|css)`)

// Every page path answers the page, with the security headers; its assets
// are the embedded build's, cached for good; the API's paths are not pages.
func TestPagesAndAssets(t *testing.T) {
	app := testApp(t)
	var index string
	for _, p := range []string{"/", "/sessions", "/sessions/0190d7a2-0000-7000-8000-000000000000", "/admin/users", "/admin/maintenance", "/admin/information", "/data", "/data/0190d7a2-0000-7000-8000-000000000000?path=a/b", "/statistics", "/admin/scheduler"} {
		res, body := get(t, app, p, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `<div id="app">`) {
			t.Fatalf("%s: %d %s %q", p, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		if res.Header.Get("Content-Security-Policy") != ContentSecurityPolicy || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
			res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("%s: headers %v", p, res.Header)
		}
		index = body
	}
	if strings.Contains(index, "<script>") || strings.Contains(index, "style=") {
		t.Fatal("index.html must have no inline script or style (the CSP forbids them)")
	}
	refs := assetRef.FindAllString(index, -1)
	if len(refs) != 2 {
		t.Fatalf("index.html loads %v, want one script and one stylesheet", refs)
	}
	for _, ref := range refs {
		res, body := get(t, app, ref)
		if res.StatusCode != 200 || len(body) == 0 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Fatalf("%s: %d %v", ref, res.StatusCode, res.Header)
		}
		want := "text/javascript"
		if strings.HasSuffix(ref, ".css") {
			want = "text/css"
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), want) {
			t.Fatalf("%s: Content-Type %q", ref, res.Header.Get("Content-Type"))
		}
		if res, _ := get(t, app, ref, "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
			t.Fatalf("%s with its ETag: %d", ref, res.StatusCode)
		}
	}
	for _, p := range []string{"/v1/auth/whoami", "/v1/nope", "/v1", "/healthz", "/metrics", "/assets/app-000000000000.js", "/favicon.ico"} {
		res, body := get(t, app, p, "Accept", "text/html")
		if strings.Contains(body, `<div id="app">`) {
			t.Fatalf("%s answered the page (%d)", p, res.StatusCode)
		}
	}
	// A client that does not ask for HTML gets the page only at /.
	if res, body := get(t, app, "/sessions", "Accept", "*/*"); strings.Contains(body, `<div id="app">`) || res.StatusCode != http.StatusNotFound {
		t.Fatalf("/sessions without Accept: text/html: %d", res.StatusCode)
	}
	if res, body := get(t, app, "/"); !strings.Contains(body, `<div id="app">`) {
		t.Fatalf("/ for any client: %d", res.StatusCode)
	}
	if _, body := get(t, app, "/v1/auth/whoami"); body != "api" {
		t.Fatalf("an API route must win over the page: %q", body)
	}
}
