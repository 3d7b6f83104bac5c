package appproxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/appproxy"
)

// routes is a read model of one running session with one app; ended
// makes it answer as for a session that ended.
type routes struct {
	mu      sync.Mutex
	session uuid.UUID
	kernel  uuid.UUID
	ended   bool
}

func (r *routes) Route(_ context.Context, session uuid.UUID, app string) (appproxy.Route, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || session != r.session {
		return appproxy.Route{}, domain.NotFound("app.route", "session")
	}
	switch app {
	case "web":
		return appproxy.Route{KernelID: r.kernel, AgentID: "a1", Port: 8080}, nil
	case "port-9000":
		return appproxy.Route{KernelID: r.kernel, AgentID: "a1", Port: 9000, OwnsRoot: true}, nil
	case appproxy.TerminalApp:
		return appproxy.Route{KernelID: r.kernel, AgentID: "a1"}, nil
	}
	return appproxy.Route{}, domain.NotFound("app.route", "app")
}

type addresses map[string]string

func (a addresses) Address(id string) (string, bool) { v, ok := a[id]; return v, ok }

// env is a proxy in front of an agent double: the double stands for the
// agent's endpoint (agents/node, tested there against real containers)
// and records what reached it.
type env struct {
	t       *testing.T
	keys    *appproxy.Keyring
	routes  *routes
	proxy   *httptest.Server
	opener  appproxy.Opener
	user    uuid.UUID
	mu      sync.Mutex
	seen    []*http.Request
	records []audit.Record
	now     time.Time
	// tunneled are the connections the agent double turned into tunnels,
	// served as the app.
	tunneled      *connListener
	tunnels       int
	tunnelsClosed int
	p             *appproxy.Proxy
}

// connListener hands the app server the tunnels' connections.
type connListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *connListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// tunneledConn is a tunnel's connection: path is its app's path on the
// agent (/kernels/{k}/apps/{port}).
type tunneledConn struct {
	net.Conn
	r    *bufio.Reader
	path string
}

func (c *tunneledConn) Read(b []byte) (int, error) { return c.r.Read(b) }

type tunnelPathKey struct{}

func newEnv(t *testing.T) *env {
	t.Helper()
	key := make([]byte, appproxy.KeySize)
	for i := range key {
		key[i] = byte(i)
	}
	keys, err := appproxy.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, keys: keys, routes: &routes{session: uuid.New(), kernel: uuid.New()}, user: uuid.New(), now: time.Now()}
	agent := e.startAgent()
	p, err := appproxy.New(appproxy.Config{
		Keys: keys, Routes: e.routes, Agents: addresses{"a1": agent},
		Sign: func(req *http.Request, agentID string) error {
			req.Header.Set("Cairn-Manager-Signature", agentID+" "+req.Method+" "+req.URL.RequestURI())
			return nil
		},
		Record: func(_ context.Context, rec audit.Record) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.records = append(e.records, rec)
			return nil
		},
		ActivityEvery: time.Hour,
		TerminalPage: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "terminal page at "+r.URL.Path)
		}),
		Now: e.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	e.proxy = httptest.NewServer(p)
	t.Cleanup(e.proxy.Close)
	base, _ := url.Parse(e.proxy.URL)
	e.opener = appproxy.Opener{Keys: keys, PublicURL: base, Now: e.clock}
	return e
}

// startAgent starts the agent double (e.agent) and the app behind its
// tunnels (e.app), and answers the agent's URL.
func (e *env) startAgent() string {
	agent := httptest.NewServer(http.HandlerFunc(e.agent))
	e.t.Cleanup(agent.Close)
	e.tunneled = newConnListener()
	apps := &http.Server{Handler: http.HandlerFunc(e.app), ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, tunnelPathKey{}, c.(*tunneledConn).path)
	}, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			e.mu.Lock()
			e.tunnelsClosed++
			e.mu.Unlock()
		}
	}}
	go func() { _ = apps.Serve(e.tunneled) }()
	e.t.Cleanup(func() { _ = apps.Close() })
	return agent.URL
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// agent answers as an agent's endpoint would: it checks the signature
// covers what it received; it turns a tunnel's connection into one to the
// app (e.app, told the app's path on the agent) after a 101 that carries
// the app token when asked; and it echoes a terminal's WebSocket.
func (e *env) agent(w http.ResponseWriter, r *http.Request) {
	if got, want := r.Header.Get("Cairn-Manager-Signature"), "a1 "+r.Method+" "+r.URL.RequestURI(); got != want {
		http.Error(w, "bad signature "+got, http.StatusUnauthorized)
		return
	}
	if parts := strings.Split(r.URL.Path, "/"); len(parts) == 6 && parts[5] == "tunnel" {
		// "", kernels, id, ports, port, tunnel
		if r.Header.Get("Upgrade") != protocol.TunnelUpgrade {
			http.Error(w, "no upgrade", http.StatusUpgradeRequired)
			return
		}
		if r.Header.Get(protocol.AppTokenHeader) == protocol.AppTokenWanted {
			w.Header().Set(protocol.AppTokenHeader, "app-token-"+parts[4])
		}
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", protocol.TunnelUpgrade)
		w.WriteHeader(http.StatusSwitchingProtocols)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.tunnels++
		e.mu.Unlock()
		e.tunneled.conns <- &tunneledConn{Conn: conn, r: buf.Reader, path: "/kernels/" + parts[2] + "/apps/" + parts[4]}
		return
	}
	e.mu.Lock()
	e.seen = append(e.seen, r.Clone(context.Background()))
	e.mu.Unlock()
	e.echo(w, r)
}

// app answers as an app would, behind a tunnel: it echoes WebSockets and
// describes plain requests (with the app's path on the agent first).
func (e *env) app(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.seen = append(e.seen, r.Clone(context.Background()))
	e.mu.Unlock()
	if r.Header.Get("Upgrade") != "" {
		e.echo(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/login") {
		http.Redirect(w, r, "/home?x=1", http.StatusFound)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "cairn_session", Value: "stolen", Path: "/"})
	http.SetCookie(w, &http.Cookie{Name: "_xsrf", Value: "app", Path: "/"})
	_, _ = io.WriteString(w, "app says "+r.Context().Value(tunnelPathKey{}).(string)+r.URL.RequestURI())
}

// echo echoes a WebSocket's messages.
func (e *env) echo(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "" {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, b); err != nil {
				return
			}
		}
	}
	http.Error(w, "not a WebSocket", http.StatusBadRequest)
}

func (e *env) lastSeen() *http.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) == 0 {
		e.t.Fatal("nothing reached the agent")
	}
	return e.seen[len(e.seen)-1]
}

func (e *env) actions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.records {
		out = append(out, r.Action)
	}
	return out
}

func (e *env) open(app string) string {
	e.t.Helper()
	o, err := e.opener.Open(e.user, e.routes.session, app)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.URL
}

// openSocket is the terminal's WebSocket link, for scripts.
func (e *env) openSocket() string {
	e.t.Helper()
	o, err := e.opener.Open(e.user, e.routes.session, appproxy.TerminalApp)
	if err != nil || o.WebSocketURL == "" {
		e.t.Fatalf("no terminal WebSocket link: %v", err)
	}
	return o.WebSocketURL
}

func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (int, string, *http.Response) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res
}

// TestTicketBecomesCookie: a ticket opens the app once, leaves a cookie
// scoped to the app's path, and drops out of the address; the app gets
// its full path, signed, without the user's Cairn cookies.
func TestTicketBecomesCookie(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	link := e.open("web")
	status, body, res := get(t, c, link+"&x=1")
	if status != http.StatusOK {
		t.Fatalf("open: %d %s", status, body)
	}
	prefix := appproxy.AppPath(e.routes.session, "web")
	if want := "app says /kernels/" + e.routes.kernel.String() + "/apps/8080" + prefix + "?x=1"; body != want {
		t.Fatalf("the agent got %q, want %q", body, want)
	}
	if strings.Contains(res.Request.URL.String(), appproxy.TicketParam) {
		t.Fatalf("the ticket stayed in the address: %s", res.Request.URL)
	}
	u, _ := url.Parse(e.proxy.URL + prefix)
	var appCookie *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		switch ck.Name {
		case appproxy.CookieName:
			appCookie = ck
		case "cairn_session":
			t.Fatal("the app set a cookie named like Cairn's")
		}
	}
	if appCookie == nil {
		t.Fatal("no app cookie")
	}
	other, _ := url.Parse(e.proxy.URL + appproxy.AppPath(uuid.New(), "web"))
	for _, ck := range c.Jar.Cookies(other) {
		if ck.Name == appproxy.CookieName {
			t.Fatal("the app cookie is sent to another session's app")
		}
	}

	req, _ := http.NewRequest(http.MethodGet, e.proxy.URL+prefix+"tree?a=b", nil)
	req.AddCookie(&http.Cookie{Name: "cairn_session", Value: "login-token"})
	req.AddCookie(&http.Cookie{Name: "theme", Value: "dark"})
	req.Header.Set("Cairn-CSRF-Token", "x")
	res2, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %d", res2.StatusCode)
	}
	seen := e.lastSeen()
	if ck := seen.Header.Get("Cookie"); strings.Contains(ck, "cairn_") || !strings.Contains(ck, "theme=dark") {
		t.Fatalf("the app got cookies %q: want only its own", ck)
	}
	if seen.Header.Get("Cairn-Csrf-Token") != "" {
		t.Fatal("a Cairn-* header reached the app")
	}
	if got := seen.Header.Get("X-Forwarded-Prefix"); got != prefix {
		t.Fatalf("X-Forwarded-Prefix %q, want %q", got, prefix)
	}
	if got := seen.Header.Get("Authorization"); got != "token app-token-8080" {
		t.Fatalf("Authorization %q: want the app token the agent answered", got)
	}
	// The app's own Authorization is kept.
	req, _ = http.NewRequest(http.MethodGet, e.proxy.URL+prefix+"tree", nil)
	req.Header.Set("Authorization", "Bearer mine")
	if res3, err := c.Do(req); err != nil {
		t.Fatal(err)
	} else {
		res3.Body.Close()
	}
	if got := e.lastSeen().Header.Get("Authorization"); got != "Bearer mine" {
		t.Fatalf("Authorization %q, want the request's own", got)
	}
	// Requests share tunnels: one per connection, not one per request.
	// (A request may dial a new one when it comes before the last answer's
	// connection went back to the pool, hence the loose bound.)
	for range 20 {
		if status, body, _ := get(t, c, e.proxy.URL+prefix+"tree"); status != http.StatusOK {
			t.Fatalf("with the cookie: %d %s", status, body)
		}
	}
	e.mu.Lock()
	tunnels := e.tunnels
	e.mu.Unlock()
	if tunnels > 10 {
		t.Fatalf("%d tunnels for 23 requests one after the other", tunnels)
	}
	if acts := e.actions(); len(acts) == 0 || acts[0] != "app.open web" {
		t.Fatalf("audit records %v, want app.open first", acts)
	}
}

// TestPreopenedPortOwnsItsRoot: a pre-opened port's app gets its path
// without the prefix, and its redirects get the prefix back.
func TestPreopenedPortOwnsItsRoot(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	status, body, _ := get(t, c, e.open("port-9000")+"&q=1")
	if want := "app says /kernels/" + e.routes.kernel.String() + "/apps/9000/?q=1"; status != http.StatusOK || body != want {
		t.Fatalf("got %d %q, want %q", status, body, want)
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(e.proxy.URL + appproxy.AppPath(e.routes.session, "port-9000") + "login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := strings.TrimSuffix(appproxy.AppPath(e.routes.session, "port-9000"), "/") + "/home?x=1"; res.Header.Get("Location") != want {
		t.Fatalf("Location %q, want %q", res.Header.Get("Location"), want)
	}
}

// TestRefused: a used, forged, expired or foreign ticket, a cookie of
// another app, and no grant at all are answered 404 without echoing the
// ticket.
func TestRefused(t *testing.T) {
	e := newEnv(t)
	link := e.open("web")
	if status, body, _ := get(t, browser(t), link); status != http.StatusOK {
		t.Fatalf("first use: %d %s", status, body)
	}
	forged := strings.Replace(link, appproxy.TicketParam+"=", appproxy.TicketParam+"=x", 1)
	otherSession, _ := e.opener.Open(e.user, uuid.New(), "web")
	foreign := strings.Replace(otherSession.URL, otherSession.URL[strings.Index(otherSession.URL, "/v1/"):strings.Index(otherSession.URL, "?")],
		appproxy.AppPath(e.routes.session, "web"), 1)
	otherApp := e.open("notebook")
	otherApp = strings.Replace(otherApp, "/apps/notebook/", "/apps/web/", 1)
	expiring := e.open("web")
	cases := map[string]string{
		"used again":        link,
		"forged":            forged,
		"another session's": foreign,
		"another app's":     otherApp,
		"no grant":          e.proxy.URL + appproxy.AppPath(e.routes.session, "web"),
		"terminal as app":   strings.Replace(e.open(appproxy.TerminalApp), "/apps/terminal/", "/apps/web/", 1),
		"not a session":     e.proxy.URL + "/v1/sessions/nope/apps/web/",
		"somewhere else":    e.proxy.URL + "/v1/users",
	}
	for name, u := range cases {
		status, body, _ := get(t, browser(t), u)
		if status != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", name, status, body)
		}
		if strings.Contains(body, appproxy.TicketParam) {
			t.Errorf("%s: the answer echoes the ticket: %s", name, body)
		}
	}
	e.advance(appproxy.DefaultTicketTTL + time.Second)
	if status, _, _ := get(t, browser(t), expiring); status != http.StatusNotFound {
		t.Fatalf("expired ticket: %d, want 404", status)
	}
}

// TestEndedSessionAtOnce: once the read models say the session ended, a
// browser holding a valid cookie gets 404 on its next request.
func TestEndedSessionAtOnce(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	if status, _, _ := get(t, c, e.open("web")); status != http.StatusOK {
		t.Fatal("open failed")
	}
	e.routes.mu.Lock()
	e.routes.ended = true
	e.routes.mu.Unlock()
	if status, _, _ := get(t, c, e.proxy.URL+appproxy.AppPath(e.routes.session, "web")); status != http.StatusNotFound {
		t.Fatalf("after the end: %d, want 404", status)
	}
}

// TestTerminalWebSocket: the terminal's WebSocket goes through with its
// ticket (once), reaches the kernel's terminal on the agent, and its end
// is recorded; without the Upgrade header the answer says what happened.
func TestTerminalWebSocket(t *testing.T) {
	e := newEnv(t)
	term := uuid.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link := e.openSocket() + "&terminal=" + term.String() + "&cols=80&rows=24"
	c, _, err := websocket.Dial(ctx, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte("echo $((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if err != nil || string(b) != "echo $((6*7))\r" {
		t.Fatalf("echo: %q %v", b, err)
	}
	if want := "/kernels/" + e.routes.kernel.String() + "/terminals/" + term.String() + "?cols=80&rows=24"; e.lastSeen().URL.RequestURI() != want {
		t.Fatalf("the agent got %s, want %s", e.lastSeen().URL.RequestURI(), want)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if _, _, err := websocket.Dial(ctx, link, nil); err == nil {
		t.Fatal("a used terminal ticket opened a second WebSocket")
	}

	res, err := http.Get(strings.Replace(e.openSocket(), "ws://", "http://", 1) + "&terminal=" + term.String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUpgradeRequired || !strings.Contains(string(b), "Upgrade header") {
		t.Fatalf("without Upgrade: %d %s", res.StatusCode, b)
	}
	waitFor(t, func() bool { return contains(e.actions(), "app.close terminal") })
}

// TestActivity: traffic is recorded as use of the session at most every
// ActivityEvery, WebSocket frames included.
func TestActivity(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	get(t, c, e.open("web"))
	for range 5 {
		get(t, c, e.proxy.URL+appproxy.AppPath(e.routes.session, "web"))
	}
	if n := count(e.actions(), "app.traffic web"); n != 1 {
		t.Fatalf("%d traffic records within ActivityEvery, want 1", n)
	}
	e.advance(time.Hour)
	get(t, c, e.proxy.URL+appproxy.AppPath(e.routes.session, "web"))
	if n := count(e.actions(), "app.traffic web"); n != 2 {
		t.Fatalf("%d traffic records after ActivityEvery, want 2", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.openSocket()+"&terminal="+uuid.NewString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	before := count(e.actions(), "app.traffic terminal")
	e.advance(time.Hour)
	if err := ws.Write(ctx, websocket.MessageText, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return count(e.actions(), "app.traffic terminal") > before })
}

// TestTerminalPage: the terminal's link opens its page (the ticket traded
// for the cookie), whose socket reaches the terminal with the cookie.
func TestTerminalPage(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	status, body, res := get(t, c, e.open(appproxy.TerminalApp))
	if status != http.StatusOK || body != "terminal page at /" {
		t.Fatalf("page: %d %q", status, body)
	}
	if _, _, res2 := get(t, c, res.Request.URL.String()+"assets/x.js"); res2.StatusCode != http.StatusOK {
		t.Fatalf("asset: %d", res2.StatusCode)
	}
	u, _ := url.Parse(e.proxy.URL + appproxy.AppPath(e.routes.session, appproxy.TerminalApp))
	var cookie string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == appproxy.CookieName {
			cookie = ck.Value
		}
	}
	if cookie == "" {
		t.Fatal("no terminal cookie")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	socket := "ws" + strings.TrimPrefix(e.proxy.URL, "http") + appproxy.AppPath(e.routes.session, appproxy.TerminalApp) + "socket?terminal=" + uuid.NewString()
	if _, _, err := websocket.Dial(ctx, socket, nil); err == nil {
		t.Fatal("the socket opened without the cookie")
	}
	ws, _, err := websocket.Dial(ctx, socket, &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {appproxy.CookieName + "=" + cookie}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageBinary, []byte("ls\r")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := ws.Read(ctx); err != nil || string(b) != "ls\r" {
		t.Fatalf("echo: %q %v", b, err)
	}
}

// TestOtherOrigins: with the app cookie, a write or a WebSocket that a
// page of another origin makes is refused; the app's own pages pass.
func TestOtherOrigins(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	get(t, c, e.open("web"))
	appURL := e.proxy.URL + appproxy.AppPath(e.routes.session, "web") + "api"
	post := func(origin, site string) int {
		req, _ := http.NewRequest(http.MethodPost, appURL, strings.NewReader("x"))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post(e.proxy.URL, "same-origin"); got != http.StatusOK {
		t.Fatalf("the app's own page: %d", got)
	}
	if got := post("", ""); got != http.StatusOK {
		t.Fatalf("no Origin (not a browser's cross-origin request): %d", got)
	}
	for _, tc := range [][2]string{{"https://evil.example", "cross-site"}, {"http://127.0.0.1:1", "same-site"}, {"", "cross-site"}} {
		if got := post(tc[0], tc[1]); got != http.StatusNotFound {
			t.Fatalf("origin %q, %s: %d, want 404", tc[0], tc[1], got)
		}
	}
	// A WebSocket to the terminal's socket from another origin.
	tc := browser(t)
	get(t, tc, e.open(appproxy.TerminalApp))
	u, _ := url.Parse(e.proxy.URL + appproxy.AppPath(e.routes.session, appproxy.TerminalApp))
	var cookie string
	for _, ck := range tc.Jar.Cookies(u) {
		cookie = ck.Value
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	socket := "ws" + strings.TrimPrefix(e.proxy.URL, "http") + appproxy.AppPath(e.routes.session, appproxy.TerminalApp) + "socket?terminal=" + uuid.NewString()
	h := http.Header{"Cookie": {appproxy.CookieName + "=" + cookie}, "Origin": {"https://evil.example"}}
	if _, _, err := websocket.Dial(ctx, socket, &websocket.DialOptions{HTTPHeader: h}); err == nil {
		t.Fatal("a WebSocket from another origin opened the terminal")
	}
	h.Set("Origin", e.proxy.URL)
	ws, _, err := websocket.Dial(ctx, socket, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("the terminal page's own WebSocket: %v", err)
	}
	ws.CloseNow()
}

func TestKeyring(t *testing.T) {
	if _, err := appproxy.NewKeyring(make([]byte, 8)); err == nil {
		t.Fatal("a short key was accepted")
	}
	path := t.TempDir() + "/k/app-proxy.key"
	k1, err := appproxy.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := appproxy.LoadOrCreateKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("the key changed on reload: %v", err)
	}
	kr, _ := appproxy.NewKeyring(k1)
	other, _ := appproxy.NewKeyring(append([]byte{1}, k1[1:]...))
	sealed := kr.Seal(appproxy.Grant{User: uuid.New(), Session: uuid.New(), App: "web", Kind: appproxy.KindCookie, Expires: time.Now().Add(time.Hour).Unix()})
	if _, err := kr.Open(sealed, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(sealed, time.Now()); err == nil {
		t.Fatal("another key opened the grant")
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(errors.New("condition not met in 10 s"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func contains(xs []string, x string) bool { return count(xs, x) > 0 }

// A proxy that stops serving closes its idle tunnels.
func TestCloseIdleTunnels(t *testing.T) {
	e := newEnv(t)
	c := browser(t)
	if status, body, _ := get(t, c, e.open("web")); status != http.StatusOK {
		t.Fatalf("open: %d %s", status, body)
	}
	e.p.CloseIdle()
	waitFor(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.tunnels > 0 && e.tunnelsClosed == e.tunnels
	})
	// A request after it opens a tunnel again.
	if status, body, _ := get(t, c, e.proxy.URL+appproxy.AppPath(e.routes.session, "web")); status != http.StatusOK {
		t.Fatalf("after CloseIdle: %d %s", status, body)
	}
}
