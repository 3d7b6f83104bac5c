package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/cairnhq/cairn/infra/apptest"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestJupyterThroughTheProxy opens the notebook of a python-image session
// as a browser does (the API's link, then the app cookie) and runs
// print(6*7) in a kernel over the kernel's WebSocket, through the app
// proxy and the agent, which hands Jupyter its token: the user never sees
// one.
func TestJupyterThroughTheProxy(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	python := podmantest.Python(t, uri)
	d := startDev(t, uri)
	c := d.create(map[string]any{"image": python, "resources": map[string]any{"cpu": 1, "mem": "1g"}})
	d.awaitStatus(c.ID, c.Position, "RUNNING")

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	link := d.openApp(c.ID, "jupyter").URL
	base := link[:strings.Index(link, "?")]
	status, _ := fetch(t, browser, link) // trades the ticket for the cookie, whatever Jupyter says yet
	await.Until(t, waitTimeout, "Jupyter answering through the proxy", func() bool {
		if status != http.StatusOK {
			status, _ = fetch(t, browser, base+"api/status")
		}
		return status == http.StatusOK
	})
	if status, _ := fetch(t, &http.Client{Timeout: 30 * time.Second}, base+"api/status"); status != http.StatusNotFound {
		t.Fatalf("without the cookie: %d, want 404", status)
	}

	req, _ := http.NewRequest(http.MethodPost, base+"api/kernels", nil)
	res, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var kernel struct {
		ID string `json:"id"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(body, &kernel) != nil || kernel.ID == "" {
		t.Fatalf("POST api/kernels: %d %s", res.StatusCode, body)
	}
	ws := "ws" + strings.TrimPrefix(base, "http") + "api/kernels/" + kernel.ID + "/channels"
	if got := execute(t, jar, ws, "print(6*7)"); got != "42\n" {
		t.Fatalf("print(6*7) printed %q", got)
	}
}

// execute runs code in a Jupyter kernel over its channels WebSocket, with
// the cookies of jar, and returns what it printed.
func execute(t *testing.T, jar http.CookieJar, url, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	out, err := apptest.JupyterExecute(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Jar: jar}}, code)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
