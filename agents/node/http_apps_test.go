package node

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// appWorld is an agent's HTTP endpoint over a made-up kernel whose
// "published" port is a Go test server on loopback: the proxy handler
// without Podman (busybox has no WebSocket server; the Podman test covers
// a real container).
type appWorld struct {
	t      testing.TB
	keys   *busauth.Keys
	agent  *Agent
	server *httptest.Server // the agent's endpoint
	kernel uuid.UUID
}

const (
	testAppToken     = "0123456789abcdef"
	testContainerApp = 8888 // the container port the made-up app is published from
	testClosedApp    = 9999 // a published container port nothing listens on
)

func newAppWorld(t testing.TB, app http.Handler) *appWorld {
	t.Helper()
	keys, err := busauth.LoadOrCreateKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := keys.Account.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	appSrv := httptest.NewServer(app)
	t.Cleanup(appSrv.Close)
	w := &appWorld{t: t, keys: keys, kernel: uuid.Must(uuid.NewV7())}
	w.agent = &Agent{
		cfg:      Config{AgentID: "apps-test"},
		log:      slog.New(slog.DiscardHandler),
		verifier: &busauth.RequestVerifier{AgentID: "apps-test", Issuer: issuer},
		apps:     newAppTransport(),
		kernels:  map[uuid.UUID]*kernel{},
	}
	k := newKernel(w.kernel, uuid.Must(uuid.NewV7()), nil)
	k.apps = kernelApps{token: testAppToken, ports: []domain.PublishedPort{
		{Name: "web", Protocol: domain.ServiceProtocolHTTP, ContainerPort: testContainerApp, HostPort: portOf(t, appSrv.Listener.Addr())},
		{Name: "port-9999", Protocol: domain.ServiceProtocolPreopen, ContainerPort: testClosedApp, HostPort: closedPort(t)},
	}}
	w.agent.kernels[w.kernel] = k
	w.server = httptest.NewServer(w.agent.Handler())
	t.Cleanup(w.server.Close)
	return w
}

func portOf(t testing.TB, addr net.Addr) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr.String())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// closedPort is a loopback port nothing listens on (it was free a moment
// ago, and nothing of this test takes it).
func closedPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return portOf(t, ln.Addr())
}

// url is the endpoint's URL of path under the kernel's app on port.
func (w *appWorld) url(port int, path string) string {
	return w.server.URL + protocol.AppPath(w.kernel, port) + path
}

// do sends a request, signed by the manager's key when signed.
func (w *appWorld) do(req *http.Request, signed bool) *http.Response {
	w.t.Helper()
	if signed {
		if err := w.keys.SignAgentRequest(req, "apps-test", time.Now()); err != nil {
			w.t.Fatal(err)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { res.Body.Close() })
	return res
}

func (w *appWorld) get(url string, signed bool) *http.Response {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.do(req, signed)
}

func problemOf(t *testing.T, res *http.Response) httpapi.Problem {
	t.Helper()
	var p httpapi.Problem
	if ct := res.Header.Get("Content-Type"); ct != httpapi.ProblemContentType {
		t.Fatalf("content type %q, want %s", ct, httpapi.ProblemContentType)
	}
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// What reaches the app: the path after the port and the query as sent,
// the app token unless the request has an Authorization of its own, none
// of Cairn's headers and cookies, the proxy's X-Forwarded-* headers; what
// comes back: the app's answer without cairn_* cookies.
func TestAppProxyRequest(t *testing.T) {
	t.Parallel()
	type seen struct {
		Method, Path, RawPath, Query, Host string
		Header                             http.Header
		Body                               string
	}
	w := newAppWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rw.Header().Add("Set-Cookie", "cairn_session=stolen; Path=/")
		rw.Header().Add("Set-Cookie", "_xsrf=abc; Path=/")
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Host, r.Header, string(body)})
	}))

	req, err := http.NewRequest(http.MethodPost, w.url(testContainerApp, "/api/contents/a%2Fb/c?x=1&y=%20z"), strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", "cairn_session=secret; _xsrf=abc; cairn_csrf=s2")
	req.Header.Set("Cairn-Request-Id", "r1")
	req.Header.Set("X-Forwarded-Host", "apps.example.org")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("Connection", "keep-alive, X-Hop")
	req.Header.Set("X-Hop", "dropped")
	res := w.do(req, true)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	var got seen
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Method != http.MethodPost || got.Path != "/api/contents/a/b/c" || got.RawPath != "/api/contents/a%2Fb/c" ||
		got.Query != "x=1&y=%20z" || got.Body != "payload" {
		t.Errorf("the app saw %s %s (raw %s) ?%s body %q", got.Method, got.Path, got.RawPath, got.Query, got.Body)
	}
	h := got.Header
	for name, want := range map[string]string{
		"Authorization": "token " + testAppToken, "Cookie": "_xsrf=abc",
		"X-Forwarded-Host": "apps.example.org", "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9, 127.0.0.1",
		busauth.ManagerSignatureHeader: "", "Cairn-Request-Id": "", "X-Hop": "",
	} {
		if v := strings.Join(h.Values(name), ","); v != want {
			t.Errorf("the app got %s %q, want %q", name, v, want)
		}
	}
	if cookies := res.Header.Values("Set-Cookie"); len(cookies) != 1 || !strings.HasPrefix(cookies[0], "_xsrf=") {
		t.Errorf("cookies set through the agent: %q, want only _xsrf", cookies)
	}

	// The request's own Authorization is the app's business.
	req, _ = http.NewRequest(http.MethodGet, w.url(testContainerApp, "/"), nil)
	req.Header.Set("Authorization", "token the-users-own")
	res = w.do(req, true)
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || got.Header.Get("Authorization") != "token the-users-own" {
		t.Errorf("the app got Authorization %q, %v; want the request's own", got.Header.Get("Authorization"), err)
	}
}

// Only the manager's signature lets a request through; a kernel or port
// the agent did not publish is 404; a published port nothing answers on
// is 502, with a detail that says so.
func TestAppProxyRefusals(t *testing.T) {
	t.Parallel()
	w := newAppWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, "ok") }))
	if res := w.get(w.url(testContainerApp, "/"), false); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d, want 401", res.StatusCode)
	}
	if res := w.get(w.url(testContainerApp, "/"), true); res.StatusCode != http.StatusOK {
		t.Errorf("signed: %d, want 200", res.StatusCode)
	}
	if p := problemOf(t, w.get(w.url(1234, "/"), true)); p.Status != http.StatusNotFound {
		t.Errorf("a port not published: %+v, want 404", p)
	}
	other := w.server.URL + "/kernels/" + uuid.NewString() + "/apps/" + strconv.Itoa(testContainerApp) + "/"
	if p := problemOf(t, w.get(other, true)); p.Status != http.StatusNotFound {
		t.Errorf("another kernel: %+v, want 404", p)
	}
	if p := problemOf(t, w.get(w.url(0, "/"), true)); p.Status != http.StatusBadRequest || p.Field != "port" {
		t.Errorf("port 0: %+v, want 400 naming port", p)
	}
	p := problemOf(t, w.get(w.url(testClosedApp, "/"), true))
	if p.Status != http.StatusBadGateway || !strings.Contains(p.Detail, "not listening yet") {
		t.Errorf("nothing listening: %+v, want 502 saying the app is not listening yet", p)
	}
}

// Answers are streamed: the first part reaches the client while the app
// still holds back the rest.
func TestAppProxyStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	w := newAppWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(rw, "first\n")
		rw.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(rw, "second\n")
	}))
	res := w.get(w.url(testContainerApp, "/events"), true)
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(release) // the app finishes only once the first part has arrived
	rest, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(rest), "second") {
		t.Errorf("rest %q, %v", rest, err)
	}
}

// A WebSocket passes through the endpoint both ways (the app is a Go echo
// server on the made-up published port).
func TestAppProxyWebSocket(t *testing.T) {
	t.Parallel()
	w := newAppWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "token "+testAppToken {
			http.Error(rw, "no token", http.StatusForbidden)
			return
		}
		c, err := websocket.Accept(rw, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, append([]byte("echo: "), msg...)); err != nil {
				return
			}
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := w.url(testContainerApp, "/ws")
	// The handshake is a GET of that URL: the manager signs it.
	sig, _ := http.NewRequest(http.MethodGet, url, nil)
	if err := w.keys.SignAgentRequest(sig, "apps-test", time.Now()); err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{HTTPHeader: sig.Header})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for _, msg := range []string{"hello", "ünïcode", strings.Repeat("x", 70000)} {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.Read(ctx)
		if err != nil || typ != websocket.MessageText || string(got) != "echo: "+msg {
			t.Fatalf("echo of %.20q: %v %.20q %v", msg, typ, got, err)
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close: %v", err)
	}

	// Without the signature the upgrade is refused.
	if _, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned upgrade: %v, %v; want 401", res, err)
	}
}

// The port table gives each kernel ports of its own, skips ports something
// else holds, is all or nothing, and hands freed ports out again.
func TestPortTable(t *testing.T) {
	t.Parallel()
	held := map[int]bool{30001: true}
	tab := newPortTable(PortRange{First: 30000, Last: 30004})
	tab.probe = func(p int) bool { return !held[p] }
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	two := []domain.ServicePort{{Name: "web", Protocol: "http", Port: 80}, {Name: "ssh", Protocol: "tcp", Port: 22}}
	pa, err := tab.allocate(a, two)
	if err != nil || len(pa) != 2 || pa[0].HostPort != 30000 || pa[1].HostPort != 30002 || pa[1].ContainerPort != 22 || pa[1].Name != "ssh" {
		t.Fatalf("a: %+v, %v; want 30000 and 30002 (30001 is held)", pa, err)
	}
	pb, err := tab.allocate(b, two)
	if err != nil || pb[0].HostPort != 30003 || pb[1].HostPort != 30004 {
		t.Fatalf("b: %+v, %v; want 30003 and 30004", pb, err)
	}
	if _, err := tab.allocate(c, two[:1]); err == nil || !strings.Contains(err.Error(), "no free host port") {
		t.Errorf("c in a full range: %v", err)
	}
	if got := tab.held(c); len(got) != 0 {
		t.Errorf("a failed allocation holds %v", got)
	}
	tab.release(a)
	pc, err := tab.allocate(c, two)
	if err != nil || pc[0].HostPort != 30000 || pc[1].HostPort != 30002 {
		t.Errorf("c after a was released: %+v, %v; want a's ports", pc, err)
	}
	tab.reserve(a, []domain.PublishedPort{{HostPort: 31000}})
	if got := tab.held(a); len(got) != 1 || got[0] != 31000 {
		t.Errorf("reserved: %v", got)
	}

	// The real probe: a port a listener holds is not free.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if canBind(portOf(t, ln.Addr())) {
		t.Error("canBind says a held port is free")
	}
}

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]PortRange{"30000-30999": {30000, 30999}, " 8000 - 8001 ": {8000, 8001}, "9000": {9000, 9000}} {
		if got, err := ParsePortRange(in); err != nil || got != want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a-b", "0-10", "10-5", "1-65536", "-"} {
		if _, err := ParsePortRange(in); err == nil {
			t.Errorf("ParsePortRange(%q) took it", in)
		}
	}
}

// A tcp app is reached through a tunnel: 101, then raw bytes both ways,
// half closes passed on; without the upgrade headers, 426.
func TestAppTunnel(t *testing.T) {
	t.Parallel()
	w := newAppWorld(t, http.NotFoundHandler())
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.WriteString(c, "hello from the app\n")
				_, _ = io.Copy(c, c) // echo until the client half-closes
			}()
		}
	}()
	w.agent.mu.Lock()
	k := w.agent.kernels[w.kernel]
	k.apps.ports = append(k.apps.ports, domain.PublishedPort{Name: "ssh", Protocol: domain.ServiceProtocolTCP, ContainerPort: 22, HostPort: portOf(t, echo.Addr())})
	w.agent.mu.Unlock()
	tunnelURL := w.server.URL + protocol.TunnelPath(w.kernel, 22)

	// Without the upgrade: 426, saying what is missing; unsigned: 401.
	if p := problemOf(t, w.get(tunnelURL, true)); p.Status != http.StatusUpgradeRequired || !strings.Contains(p.Detail, "Upgrade: cairn-tunnel") {
		t.Errorf("no upgrade: %+v", p)
	}
	if res := w.get(tunnelURL, false); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d", res.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodGet, tunnelURL, nil)
	if err := w.keys.SignAgentRequest(req, "apps-test", time.Now()); err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", TunnelProtocol)
	conn, err := net.Dial("tcp", w.server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Upgrade") != TunnelProtocol {
		t.Fatalf("upgrade answer %+v, %v", res, err)
	}
	if res.Header.Get(protocol.AppTokenHeader) != "" {
		t.Fatal("the app token in an answer that did not ask for it")
	}
	if line, err := br.ReadString('\n'); err != nil || line != "hello from the app\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	payload := strings.Repeat("bytes both ways ", 10000)
	go func() {
		_, _ = io.WriteString(conn, payload)
		_ = conn.(*net.TCPConn).CloseWrite() // the app reads EOF, and closes
	}()
	back, err := io.ReadAll(br)
	if err != nil || string(back) != payload {
		t.Errorf("echoed %d bytes, %v; want the %d sent", len(back), err, len(payload))
	}

	// The app proxy asks for the app token, which it adds to the HTTP
	// requests it sends through the tunnel.
	req.Header.Set(protocol.AppTokenHeader, protocol.AppTokenWanted)
	conn2, err := net.Dial("tcp", w.server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	_ = conn2.SetDeadline(time.Now().Add(30 * time.Second))
	if err := req.Write(conn2); err != nil {
		t.Fatal(err)
	}
	res, err = http.ReadResponse(bufio.NewReader(conn2), req)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get(protocol.AppTokenHeader) != testAppToken {
		t.Fatalf("upgrade answer asked for the token %+v, %v", res, err)
	}
}

// The cost of the agent's hop: the same GET of 16 KiB through the
// endpoint (signed, as the proxy sends it) and straight to the app's port.
func BenchmarkAppProxy(b *testing.B) {
	payload := strings.Repeat("x", 16<<10)
	app := http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, payload) })
	w := newAppWorld(b, app)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	run := func(b *testing.B, url string, sign bool) {
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if sign {
				if err := w.keys.SignAgentRequest(req, "apps-test", time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || n != int64(len(payload)) {
				b.Fatalf("status %d, %d bytes", res.StatusCode, n)
			}
		}
	}
	b.Run("through-agent", func(b *testing.B) { run(b, w.url(testContainerApp, "/"), true) })
	b.Run("direct", func(b *testing.B) {
		hp, _ := w.agent.kernels[w.kernel].apps.hostPort(testContainerApp)
		run(b, "http://127.0.0.1:"+strconv.Itoa(hp)+"/", false)
	})
}
