package e2e

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// proxyLine is `cairn proxy`'s line saying it serves, and its URL.
var proxyLine = regexp.MustCompile(`^app proxy\s+(http://\S+)`)

// separateProxy is a `cairn proxy` process serving a cairn dev's apps,
// with what it takes to start it again.
type separateProxy struct {
	t    testing.TB
	args []string
	proc *proc
}

// startSeparateProxy starts `cairn proxy` for d, whose store is the
// PostgreSQL DSN store and whose tickets are sealed with keyFile, on
// listen, with extra flags.
func startSeparateProxy(t testing.TB, d *devServer, store, keyFile, listen string, extra ...string) *separateProxy {
	t.Helper()
	secrets := t.TempDir()
	agentKey, busCreds := filepath.Join(secrets, "proxy-agent.key"), filepath.Join(secrets, "proxy-bus.creds")
	runCairn(t, "bus", "app-proxy-key", "--data-dir", d.dataDir, "--out", agentKey, "--credentials-out", busCreds)
	p := &separateProxy{t: t, args: append([]string{"proxy", "--listen", listen, "--store", store,
		"--grant-key", keyFile, "--agent-key", agentKey,
		"--bus", d.natsURL, "--bus-credentials", busCreds,
		"--data-dir", filepath.Join(t.TempDir(), "proxy"), "--metrics-listen", "127.0.0.1:0"}, extra...)}
	p.start()
	return p
}

// metricsLine is `cairn proxy`'s line naming its metrics listener.
var metricsLine = regexp.MustCompile(`^metrics\s+(\S+)`)

func (p *separateProxy) start() {
	p.t.Helper()
	p.proc = startProc(p.t, "cairn-proxy", p.args...)
	p.proc.waitLine(proxyLine)
	metrics := p.proc.waitLine(metricsLine)[1]
	if status, body := fetch(p.t, &http.Client{Timeout: 30 * time.Second}, "http://"+metrics+"/metrics"); status != http.StatusOK ||
		!strings.Contains(body, "cairn_app_proxy_websockets") {
		p.t.Fatalf("the proxy's /metrics: %d, without the proxy's gauges", status)
	}
}

// TestAppsThroughASeparateProxy runs cairn dev on PostgreSQL without its
// embedded app proxy and a `cairn proxy` beside it: an app and a terminal
// open through the separate proxy, which routes by the shared read models
// it reads; killed and started again, it serves the same URL with the
// cookie the browser holds at its first request; the session's end closes
// the app at once.
func TestAppsThroughASeparateProxy(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	pgURL, schema := pgtest.Schema(t)
	store := pgURL + map[bool]string{true: "&", false: "?"}[strings.Contains(pgURL, "?")] + "schema=" + schema
	proxyAddr := freeAddr(t)
	keyFile := filepath.Join(t.TempDir(), "app-proxy.key")
	d := startDev(t, uri, "--store", store, "--app-proxy-listen", "off",
		"--app-proxy-url", "http://"+proxyAddr, "--app-proxy-key", keyFile)
	proxy := startSeparateProxy(t, d, store, keyFile, proxyAddr)

	c := d.create(map[string]any{
		"command":       `sh -c 'mkdir -p /www && echo "hello from $CAIRN_SESSION_ID" > /www/index.html && exec busybox httpd -f -p 8080 -h /www'`,
		"resources":     map[string]any{"cpu": 1, "mem": "64m"},
		"preopen_ports": []int{8080},
	})
	d.awaitStatus(c.ID, c.Position, "RUNNING")

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	link := d.openApp(c.ID, "port-8080").URL
	if !strings.HasPrefix(link, "http://"+proxyAddr+"/") {
		t.Fatalf("the link %s is not on the separate proxy %s", link, proxyAddr)
	}
	appURL := "http://" + proxyAddr + "/v1/sessions/" + c.ID + "/apps/port-8080/"
	want := "hello from " + c.ID + "\n"
	status, body := fetch(t, browser, link)
	await.Until(t, waitTimeout, "the web server answering through the separate proxy", func() bool {
		if status != http.StatusOK {
			status, body = fetch(t, browser, appURL)
		}
		return status == http.StatusOK
	})
	if body != want {
		t.Fatalf("through the separate proxy: %q, want %q", body, want)
	}

	// The terminal as the Web-UI's page uses it: its link gives the
	// browser the terminal's cookie, its socket is a fixed URL.
	if status, _ := fetch(t, browser, d.openApp(c.ID, "terminal").URL); status != http.StatusOK {
		t.Fatalf("the terminal's page: %d", status)
	}
	socket := "ws://" + proxyAddr + "/v1/sessions/" + c.ID + "/apps/terminal/socket?terminal=" + uuid.NewString() + "&cols=100&rows=30"
	ws := dialWithCookie(t, browser, socket)
	ws.send("echo $((6*7))\r")
	ws.until("42")
	// Wait for the shell to have run it: input still in flight when the
	// proxy dies is lost with it.
	ws.send("export CAIRN_E2E=kept-across-proxies; echo exported-$((1+1))\r")
	ws.until("exported-2")

	// The proxy crashes and starts again: the first request with the
	// cookie the browser holds is served, nothing relearned.
	proxy.proc.kill9()
	if _, err := browser.Get(appURL); err == nil {
		t.Fatal("the app answered while no proxy ran")
	}
	killed := time.Now()
	proxy.start()
	if status, body := fetch(t, browser, appURL); status != http.StatusOK || body != want {
		t.Fatalf("the first request to the restarted proxy: %d %q, want 200 %q", status, body, want)
	}
	t.Logf("the app answered %s after the proxy was killed (start included)", time.Since(killed).Round(time.Millisecond))
	// The terminal's socket, at the same URL with the same cookie, is the
	// same shell.
	ws.conn.CloseNow()
	ws = dialWithCookie(t, browser, socket)
	ws.send("echo ${CAIRN_E2E}-ok\r")
	ws.until("kept-across-proxies-ok")
	ws.conn.Close(websocket.StatusNormalClosure, "")

	// The end closes the app at once.
	pos := d.terminate(c.ID)
	d.await(c.ID, pos, "ending", func(s session) bool { return s.Status == "TERMINATING" || terminal(s.Status) })
	if status, _ := fetch(t, browser, appURL); status != http.StatusNotFound {
		t.Fatalf("after the end: %d, want 404", status)
	}
}

// TestAppsOnTheirOwnHosts opens apps in the subdomain mode, through a
// separate proxy reached at 127.0.0.1 with the apps' Host names (no DNS):
// a pre-opened port's web server gets "/" at its host's root; the cookie
// of one app's host lets nothing in on another app's host nor on another
// session's.
func TestAppsOnTheirOwnHosts(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	pgURL, schema := pgtest.Schema(t)
	store := pgURL + map[bool]string{true: "&", false: "?"}[strings.Contains(pgURL, "?")] + "schema=" + schema
	proxyAddr := freeAddr(t)
	_, port, _ := net.SplitHostPort(proxyAddr)
	const domain = "apps.example.test"
	keyFile := filepath.Join(t.TempDir(), "app-proxy.key")
	d := startDev(t, uri, "--store", store, "--app-proxy-listen", "off",
		"--app-proxy-url", "http://"+proxyAddr, "--app-proxy-key", keyFile, "--app-proxy-domain", domain)
	startSeparateProxy(t, d, store, keyFile, proxyAddr, "--domain", domain)

	// Every name resolves to the proxy, as a DNS wildcard would.
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, proxyAddr)
	}
	newBrowser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial}}
	}
	web := func(name string) map[string]any {
		return map[string]any{
			"command":       `sh -c 'mkdir -p /www && echo "` + name + ` at the root" > /www/index.html && exec busybox httpd -f -p 8080 -h /www'`,
			"resources":     map[string]any{"cpu": 1, "mem": "64m"},
			"preopen_ports": []int{8080, 8081},
		}
	}
	a, b := d.create(web("a")), d.create(web("b"))
	d.awaitStatus(a.ID, a.Position, "RUNNING")
	d.awaitStatus(b.ID, b.Position, "RUNNING")
	hostOf := func(id, app string) string {
		return "http://" + app + "--" + strings.ReplaceAll(id, "-", "") + "." + domain + ":" + port + "/"
	}

	browser := newBrowser()
	link := d.openApp(a.ID, "port-8080").URL
	if !strings.HasPrefix(link, hostOf(a.ID, "port-8080")+"?") {
		t.Fatalf("the link %s is not on the app's own host %s", link, hostOf(a.ID, "port-8080"))
	}
	status, body := fetch(t, browser, link)
	await.Until(t, waitTimeout, "the web server answering at its host's root", func() bool {
		if status != http.StatusOK {
			status, body = fetch(t, browser, hostOf(a.ID, "port-8080"))
		}
		return status == http.StatusOK
	})
	if body != "a at the root\n" {
		t.Fatalf("at the app's host: %q, want httpd's index at /", body)
	}
	u, _ := url.Parse(hostOf(a.ID, "port-8080"))
	cookies := browser.Jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("the app's host holds cookies %v, want the app cookie", cookies)
	}
	// The browser would never send it elsewhere (no Domain attribute);
	// sent by hand, it lets nothing in.
	for _, other := range []string{hostOf(a.ID, "port-8081"), hostOf(b.ID, "port-8080")} {
		ou, _ := url.Parse(other)
		if got := browser.Jar.Cookies(ou); len(got) != 0 {
			t.Errorf("the browser would send %v to %s", got, other)
		}
		req, _ := http.NewRequest(http.MethodGet, other, nil)
		req.AddCookie(cookies[0])
		res, err := newBrowser().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s with the cookie of %s: %d, want 404", other, hostOf(a.ID, "port-8080"), res.StatusCode)
		}
	}
	// Session b's own link works on its own host, with its own cookie.
	other := newBrowser()
	if status, body := fetch(t, other, d.openApp(b.ID, "port-8080").URL); status != http.StatusOK || body != "b at the root\n" {
		t.Fatalf("session b's app: %d %q", status, body)
	}
}

// dialWithCookie opens a terminal's socket as the terminal page does: at
// its fixed URL, with the browser's cookie.
func dialWithCookie(t testing.TB, browser *http.Client, socket string) *termConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, socket, &websocket.DialOptions{HTTPClient: browser})
	if err != nil {
		t.Fatalf("terminal socket: %v", err)
	}
	typ, b, err := c.Read(ctx)
	if err != nil || typ != websocket.MessageText || !strings.Contains(string(b), `"attached"`) {
		t.Fatalf("terminal's first frame: %v %q %v, want the attached message", typ, b, err)
	}
	return &termConn{t: t, conn: c}
}
