package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// openedApp is the answer of POST /v1/sessions/{id}/apps/{app}.
type openedApp struct {
	App          string `json:"app"`
	URL          string `json:"url"`
	WebSocketURL string `json:"websocket_url"`
}

func (d *devServer) openApp(id, app string) openedApp {
	d.t.Helper()
	var o openedApp
	d.call("POST", "/v1/sessions/"+id+"/apps/"+app, nil, http.StatusCreated, &o)
	if o.URL == "" {
		d.t.Fatalf("open %s answered no URL", app)
	}
	return o
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestAppsThroughTheProxy runs a web server in a session on a pre-opened
// port and a terminal, both through `cairn dev`'s app proxy and the
// local agent's endpoint, as a browser and a script reach them: the link
// works once, another user cannot have one, the terminal survives a
// dropped connection, the proxy's restart keeps the URL working, and the
// session's end closes the app at once.
func TestAppsThroughTheProxy(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	proxyAddr := freeAddr(t)
	d := startDev(t, uri, "--app-proxy-listen", proxyAddr)

	c := d.create(map[string]any{
		"command":       `sh -c 'mkdir -p /www && echo "hello from $CAIRN_SESSION_ID" > /www/index.html && exec busybox httpd -f -p 8080 -h /www'`,
		"resources":     map[string]any{"cpu": 1, "mem": "64m"},
		"preopen_ports": []int{8080},
	})
	s := d.awaitStatus(c.ID, c.Position, "RUNNING")
	var shown struct {
		Kernels []struct {
			ServicePorts []struct {
				Name          string `json:"name"`
				Protocol      string `json:"protocol"`
				ContainerPort int    `json:"container_port"`
				HostPort      int    `json:"host_port"`
			} `json:"service_ports"`
		} `json:"kernels"`
	}
	d.call("GET", fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", c.ID, s.Position), nil, http.StatusOK, &shown)
	if len(shown.Kernels) == 0 || len(shown.Kernels[0].ServicePorts) != 1 || shown.Kernels[0].ServicePorts[0].Name != "port-8080" ||
		shown.Kernels[0].ServicePorts[0].HostPort == 0 {
		t.Fatalf("the session shows service ports %+v, want port-8080 published", shown.Kernels)
	}

	// The browser: the link, then the cookie, as the app starts.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	link := d.openApp(c.ID, "port-8080").URL
	if !strings.HasPrefix(link, "http://"+proxyAddr+"/") {
		t.Fatalf("the link %s is not on the app proxy %s", link, proxyAddr)
	}
	status, body := fetch(t, browser, link)
	appURL := "http://" + proxyAddr + "/v1/sessions/" + c.ID + "/apps/port-8080/"
	await.Until(t, waitTimeout, "the web server answering through the proxy", func() bool {
		if status != http.StatusOK {
			status, body = fetch(t, browser, appURL)
		}
		return status == http.StatusOK
	})
	if want := "hello from " + c.ID + "\n"; body != want {
		t.Fatalf("through the proxy: %q, want %q", body, want)
	}
	if status, _ := fetch(t, &http.Client{Timeout: 30 * time.Second}, link); status != http.StatusNotFound {
		t.Fatalf("the link used a second time: %d, want 404", status)
	}
	if status, _ := fetch(t, &http.Client{Timeout: 30 * time.Second}, appURL); status != http.StatusNotFound {
		t.Fatalf("without the cookie: %d, want 404", status)
	}

	// Another user of the same project cannot open it.
	other := d.otherUser(t, "eve@cairn.test")
	other.call("POST", "/v1/sessions/"+c.ID+"/apps/port-8080", nil, http.StatusNotFound, nil)
	other.call("POST", "/v1/sessions/"+c.ID+"/apps/terminal", nil, http.StatusNotFound, nil)

	// The terminal, as a script uses it: 42, then a dropped connection
	// and a reattach to the same shell.
	term := uuid.NewString()
	ws := dialTerminal(t, d.openApp(c.ID, "terminal").WebSocketURL, term)
	ws.send("echo $((6*7))\r")
	ws.until("42")
	ws.send("export CAIRN_E2E=kept-across-reconnects; echo exported-$((1+1))\r")
	ws.until("exported-2") // run before the network goes
	ws.conn.CloseNow()     // the network goes away, no close frame
	ws = dialTerminal(t, d.openApp(c.ID, "terminal").WebSocketURL, term)
	ws.send("echo ${CAIRN_E2E}-ok\r")
	ws.until("kept-across-reconnects-ok")
	ws.conn.Close(websocket.StatusNormalClosure, "")

	// The proxy restarts (with all of cairn dev): the same URL, the same
	// cookie, working again within seconds.
	d.restart(uri, "--app-proxy-listen", proxyAddr)
	restarted := time.Now()
	await.Until(t, waitTimeout, "the app through the restarted proxy", func() bool {
		status, body = fetch(t, browser, appURL)
		return status == http.StatusOK
	})
	t.Logf("the app answered %s after the restart", time.Since(restarted))

	// The end closes the app at once.
	pos := d.terminate(c.ID)
	d.await(c.ID, pos, "ending", func(s session) bool { return s.Status == "TERMINATING" || terminal(s.Status) })
	if status, _ := fetch(t, browser, appURL); status != http.StatusNotFound {
		t.Fatalf("after the end: %d, want 404", status)
	}
}

func fetch(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// otherUser makes a user in the default project and returns the server
// as that user.
func (d *devServer) otherUser(t testing.TB, email string) *devServer {
	t.Helper()
	const password = "a long enough password"
	var u struct {
		ID string `json:"id"`
	}
	d.call("POST", "/v1/users", map[string]any{"email": email, "password": password}, http.StatusCreated, &u)
	d.call("PUT", "/v1/projects/default/members/"+u.ID+"?domain=default", nil, http.StatusOK, nil)
	var kp struct {
		Position uint64 `json:"position"`
	}
	d.call("POST", "/v1/keypairs", map[string]any{"user_id": u.ID, "resource_policy": "default", "main": true}, http.StatusCreated, &kp)
	d.call("GET", fmt.Sprintf("/v1/users/%s?wait_for_position=%d", u.ID, kp.Position), nil, http.StatusOK, nil)
	var login struct {
		Token string `json:"token"`
	}
	d.call("POST", "/v1/auth/login", map[string]any{"email": email, "password": password}, http.StatusOK, &login)
	return d.withToken(login.Token)
}

// restart stops cairn dev (SIGTERM, a clean stop) and starts it again on
// the same data directory and agent id, with extra flags; the API's port
// may change, the credentials file says where it is.
func (d *devServer) restart(podmanURI string, extra ...string) {
	d.t.Helper()
	if err := d.proc.stop(syscall.SIGTERM); err != nil {
		d.t.Fatalf("stop cairn dev: %v", err)
	}
	args := append([]string{"dev",
		"--listen", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0",
		"--data-dir", d.dataDir, "--agent-id", d.agentID, "--podman", podmanURI,
	}, extra...)
	d.proc = startProc(d.t, "cairn-dev-again", args...)
	d.natsURL = d.waitLine(busLine)[1]
	raw, err := os.ReadFile(filepath.Join(d.dataDir, "credentials.json"))
	if err != nil {
		d.t.Fatal(err)
	}
	var creds struct {
		APIURL string `json:"api_url"`
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		d.t.Fatal(err)
	}
	d.api = creds.APIURL
}

// termConn is a terminal's WebSocket and what it printed so far.
type termConn struct {
	t    testing.TB
	conn *websocket.Conn
	out  bytes.Buffer
}

func dialTerminal(t testing.TB, link, term string) *termConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, link+"&terminal="+term+"&cols=100&rows=30", nil)
	if err != nil {
		t.Fatalf("terminal: %v", err)
	}
	typ, b, err := c.Read(ctx)
	if err != nil || typ != websocket.MessageText || !bytes.Contains(b, []byte(`"attached"`)) {
		t.Fatalf("terminal's first frame: %v %q %v, want the attached message", typ, b, err)
	}
	return &termConn{t: t, conn: c}
}

func (c *termConn) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageBinary, []byte(s)); err != nil {
		c.t.Fatalf("terminal: send: %v", err)
	}
}

// until reads the terminal's output until want appears on a line of its
// own making (not the echo of the command typed).
func (c *termConn) until(want string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for !bytes.Contains(c.out.Bytes(), []byte("\n"+want)) {
		typ, b, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("terminal: waiting for %q: %v; printed so far %q", want, err, c.out.String())
		}
		if typ == websocket.MessageBinary {
			c.out.Write(b)
		}
	}
}
