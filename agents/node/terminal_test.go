package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
)

// termClient is a test's WebSocket to a terminal: it collects the output
// (binary frames) as a screen and the control messages in order.
type termClient struct {
	t    *testing.T
	conn *websocket.Conn

	mu       sync.Mutex
	screen   bytes.Buffer
	controls []map[string]any
	// closed is set when the connection ended; status is the close
	// status the agent sent (-1: none).
	closed bool
	status websocket.StatusCode
	reason string
}

// terminalWorld is a running agent with one running kernel and an
// httptest server of the agent's handler.
type terminalWorld struct {
	*harness
	agent  *node.Agent
	stop   func() // stops the agent
	create protocol.KernelCreate
	srv    *httptest.Server
}

func newTerminalWorld(t *testing.T, tune func(*node.Config)) *terminalWorld {
	t.Helper()
	return newTerminalWorldRunning(t, tune, "sleep", "600")
}

// newTerminalWorldRunning is a terminal world whose kernel runs command.
func newTerminalWorldRunning(t *testing.T, tune func(*node.Config), command ...string) *terminalWorld {
	t.Helper()
	h := newHarness(t)
	cfg := h.config()
	if tune != nil {
		tune(&cfg)
	}
	a, stop := h.runAgent(cfg)
	create := h.create(command...)
	h.send(create)
	h.status(0, create.KernelID, domain.PhaseRunning)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return &terminalWorld{harness: h, agent: a, stop: stop, create: create, srv: srv}
}

func (w *terminalWorld) terminalPath(id uuid.UUID, query string) string {
	p := "/kernels/" + w.create.KernelID.String() + "/terminals/" + id.String()
	if query != "" {
		p += "?" + query
	}
	return p
}

// signedHeader is the manager's signature of a GET of path.
func (w *terminalWorld) signedHeader(path string) http.Header {
	req, err := http.NewRequest(http.MethodGet, w.srv.URL+path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.signAs(w.agentID)(req)
	return req.Header
}

// dial opens a WebSocket to path (signed unless header is given) and
// reads what comes.
func (w *terminalWorld) dial(path string, header http.Header) (*termClient, *http.Response, error) {
	return w.dialReading(path, header, true)
}

func (w *terminalWorld) dialReading(path string, header http.Header, reading bool) (*termClient, *http.Response, error) {
	if header == nil {
		header = w.signedHeader(path)
	}
	ctx, cancel := context.WithTimeout(w.ctx, waitTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.srv.URL, "http")+path, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	c := &termClient{t: w.t, conn: conn, status: -1}
	if reading {
		go c.read(w.ctx)
	}
	w.t.Cleanup(func() {
		_ = conn.CloseNow()
		if w.t.Failed() {
			w.t.Logf("the screen of %s:\n%q", path, c.Screen())
		}
	})
	return c, resp, nil
}

// open attaches to terminal id and waits for the attached message.
func (w *terminalWorld) open(id uuid.UUID, query string) (*termClient, map[string]any) {
	w.t.Helper()
	c, resp, err := w.dial(w.terminalPath(id, query), nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		w.t.Fatalf("dial terminal %s: %v (status %d)", id, err, status)
	}
	return c, c.control(0, "attached")
}

func (c *termClient) read(ctx context.Context) {
	for {
		typ, data, err := c.conn.Read(ctx)
		c.mu.Lock()
		if err != nil {
			c.closed = true
			c.status = websocket.CloseStatus(err)
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				c.reason = ce.Reason
			}
			c.mu.Unlock()
			return
		}
		if typ == websocket.MessageBinary {
			c.screen.Write(data)
		} else {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				c.t.Errorf("control message %q: %v", data, err)
			}
			c.controls = append(c.controls, m)
		}
		c.mu.Unlock()
	}
}

func (c *termClient) Screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.screen.String()
}

// shows waits until the screen contains want.
func (c *termClient) shows(want string) {
	c.t.Helper()
	waitFor(c.t, "the terminal showing "+want, func() bool { return strings.Contains(c.Screen(), want) }, c.Screen)
}

// control waits for the i-th control message and checks its type.
func (c *termClient) control(i int, typ string) map[string]any {
	c.t.Helper()
	var m map[string]any
	waitFor(c.t, "control message "+typ, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.controls) > i {
			m = c.controls[i]
			return true
		}
		return false
	}, c.Screen)
	if m["type"] != typ {
		c.t.Fatalf("control message %d = %v, want type %s", i, m, typ)
	}
	return m
}

// closedWith waits for the connection to end and returns the close status.
func (c *termClient) closedWith() (websocket.StatusCode, string) {
	c.t.Helper()
	waitFor(c.t, "the connection closed", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closed
	}, c.Screen)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.reason
}

func (c *termClient) typeIn(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageBinary, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *termClient) resize(cols, rows int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"type": "resize", "cols": cols, "rows": rows})
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// waitFor polls cond (a test's terminal clients log their screens when it
// fails).
func waitFor(t *testing.T, what string, cond func() bool, _ func() string) {
	t.Helper()
	await.Until(t, waitTimeout, what, cond)
}

// list returns GET /kernels/{kernel}/terminals.
func (w *terminalWorld) list() ([]node.TerminalInfo, int) {
	w.t.Helper()
	body, status := get(w.t, w.srv.URL+"/kernels/"+w.create.KernelID.String()+"/terminals", w.signAs(w.agentID))
	var out []node.TerminalInfo
	if status == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			w.t.Fatalf("terminal list %q: %v", body, err)
		}
	}
	return out, status
}

// A terminal is a shell in the kernel that survives its client: it
// computes, takes its size from the query and from resize messages, keeps
// its state and scrollback across a reattach, is taken over by a second
// client, and reports its exit.
func TestTerminal(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, nil)
	id := uuid.New()

	c, attached := w.open(id, "cols=100&rows=30")
	if attached["terminal"] != id.String() || attached["new"] != true {
		t.Errorf("attached = %v, want terminal %s, new", attached, id)
	}
	c.typeIn("echo $((6*7))\r")
	c.shows("42")
	c.typeIn("stty size\r")
	c.shows("30 100")
	c.resize(120, 40)
	c.typeIn("stty size\r")
	c.shows("40 120")
	c.typeIn("echo $TERM; KEPT=kept-$((1+1)); echo marker-one\r")
	c.shows("xterm-256color")
	c.shows("marker-one\r\n")
	if list, status := w.list(); status != http.StatusOK || len(list) != 1 || list[0].ID != id || !list[0].Attached {
		t.Errorf("terminals while attached = %d %+v", status, list)
	}
	used := w.agent.TerminalActivity(w.create.KernelID)
	if used.IsZero() {
		t.Error("TerminalActivity is zero after input and output")
	}

	// The connection drops without a close: the terminal lives on.
	_ = c.conn.CloseNow()
	waitFor(t, "the terminal listed detached", func() bool {
		list, _ := w.list()
		return len(list) == 1 && !list[0].Attached
	}, func() string { return "" })

	again, attached := w.open(id, "cols=90&rows=20")
	if attached["new"] != false {
		t.Errorf("attached again = %v, want new false", attached)
	}
	again.shows("marker-one") // the scrollback
	again.typeIn("echo got-$KEPT\r")
	again.shows("got-kept-2")
	again.typeIn("stty size\r")
	again.shows("20 90")
	if now := w.agent.TerminalActivity(w.create.KernelID); !now.After(used) {
		t.Errorf("TerminalActivity %s did not move on from %s", now, used)
	}

	// A second client takes the terminal over; the first is told why.
	third, attached := w.open(id, "")
	if attached["new"] != false {
		t.Errorf("attached by a third client = %v", attached)
	}
	if status, reason := again.closedWith(); status != 4001 || !strings.Contains(reason, "another client") {
		t.Errorf("the client taken over was closed with %d %q, want 4001", status, reason)
	}
	third.typeIn("exit 3\r")
	if exit := third.control(1, "exit"); exit["code"] != float64(3) {
		t.Errorf("exit message = %v, want code 3", exit)
	}
	if status, _ := third.closedWith(); status != websocket.StatusNormalClosure {
		t.Errorf("closed after the exit with %d, want 1000", status)
	}
	waitFor(t, "no terminal listed", func() bool {
		list, status := w.list()
		return status == http.StatusOK && len(list) == 0
	}, func() string { return "" })
}

// The endpoint refuses what is not a signed WebSocket request for a
// running kernel's terminal, each with the status that says why.
func TestTerminalRefused(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, func(cfg *node.Config) { cfg.TerminalsPerKernel = 2 })
	path := w.terminalPath(uuid.New(), "")

	if _, resp, err := w.dial(path, http.Header{}); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %v, %v; want 401", err, resp)
	}
	body, status := get(t, w.srv.URL+path, w.signAs(w.agentID))
	if status != http.StatusUpgradeRequired || !strings.Contains(body, "Upgrade") || !strings.Contains(body, "load balancer") {
		t.Errorf("without upgrade: %d %s; want 426 saying the Upgrade header was stripped", status, body)
	}
	for _, tc := range []struct{ path, field string }{
		{"/kernels/" + w.create.KernelID.String() + "/terminals/nope", "terminal"},
		{"/kernels/nope/terminals/" + uuid.NewString(), "kernel"},
		{w.terminalPath(uuid.New(), "cols=0&rows=20"), "cols"},
		{w.terminalPath(uuid.New(), "cols=80&rows=x"), "rows"},
	} {
		_, resp, err := w.dial(tc.path, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v; want 400", tc.path, err)
			continue
		}
	}
	if _, resp, err := w.dial("/kernels/"+uuid.NewString()+"/terminals/"+uuid.NewString(), nil); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a kernel the agent does not have: %v; want 404", err)
	}

	// At most TerminalsPerKernel terminals; an exited one frees its place.
	first, _ := w.open(uuid.New(), "")
	w.open(uuid.New(), "")
	if _, resp, err := w.dial(w.terminalPath(uuid.New(), ""), nil); err == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("a third terminal: %v; want 409", err)
	}
	first.typeIn("exit\r")
	first.control(1, "exit")
	waitFor(t, "one terminal listed", func() bool {
		list, _ := w.list()
		return len(list) == 1
	}, first.Screen)
	w.open(uuid.New(), "")
}

// Destroying the kernel ends its terminals (the client is told), a
// terminal without a client ends after the detach timeout, and a client
// that does not answer pings is dropped.
func TestTerminalEnds(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, func(cfg *node.Config) {
		cfg.TerminalDetachTimeout = time.Second
		cfg.TerminalPingInterval = 200 * time.Millisecond
	})

	// Detached for longer than the timeout: ended.
	gone := uuid.New()
	dropped, _ := w.open(gone, "")
	dropped.typeIn("echo ready\r")
	dropped.shows("ready")
	_ = dropped.conn.CloseNow()
	waitFor(t, "the detached terminal ended", func() bool {
		list, _ := w.list()
		return len(list) == 0
	}, func() string { return "" })

	// A client that answers pings keeps its terminal past the detach
	// timeout; one that does not (it never reads, so never answers) is
	// dropped, and its terminal then ends.
	c, _ := w.open(uuid.New(), "")
	c.typeIn("echo attached\r")
	c.shows("attached")
	if _, resp, err := w.dialReading(w.terminalPath(uuid.New(), ""), nil, false); err != nil {
		t.Fatalf("dial: %v, %v", err, resp)
	}
	waitFor(t, "two terminals listed", func() bool {
		list, _ := w.list()
		return len(list) == 2
	}, c.Screen)
	waitFor(t, "the silent client's terminal ended", func() bool {
		list, _ := w.list()
		return len(list) == 1
	}, c.Screen)
	if list, _ := w.list(); len(list) != 1 || !list[0].Attached {
		t.Errorf("terminals = %+v, want the answering client's, attached", list)
	}
	c.typeIn("echo still-here\r")
	c.shows("still-here")
	mark := w.reports.mark()
	w.send(w.destroy(w.create))
	c.control(1, "exit")
	if status, reason := c.closedWith(); status != websocket.StatusNormalClosure || !strings.Contains(reason, "destroyed") {
		t.Errorf("closed with %d %q when the kernel was destroyed", status, reason)
	}
	w.status(mark, w.create.KernelID, domain.PhaseRemoved)
	if _, status := w.list(); status != http.StatusNotFound {
		t.Errorf("terminals of a removed kernel: %d, want 404", status)
	}
}

// A full-screen program survives a detach: vi still runs, seen from a
// second terminal, and redraws for the client that attaches again.
func TestTerminalFullScreen(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, nil)
	id := uuid.New()
	c, _ := w.open(id, "cols=80&rows=24")
	c.typeIn("vi /tmp/notes\r")
	c.typeIn("ihello-from-vi\x1b")
	c.shows("hello-from-vi")
	_ = c.conn.CloseNow()

	other, _ := w.open(uuid.New(), "")
	other.typeIn("ps\r")
	other.shows("vi /tmp/notes")

	again, _ := w.open(id, "cols=100&rows=30")
	again.resize(101, 31)
	// vi redraws at its new size, its text included.
	waitFor(t, "vi redrawn", func() bool { return strings.Count(again.Screen(), "hello-from-vi") >= 2 }, again.Screen)
	again.typeIn(":q!\r")
	again.typeIn("echo vi-quit\r")
	again.shows("vi-quit")
}

// A kernel that exits ends its terminals: the client is told, and the
// kernel gets no new one.
func TestTerminalKernelExits(t *testing.T) {
	t.Parallel()
	w := newTerminalWorldRunning(t, nil, "sh", "-c", "while [ ! -e /tmp/stop ]; do sleep 0.1; done")
	c, _ := w.open(uuid.New(), "")
	mark := w.reports.mark()
	c.typeIn("touch /tmp/stop\r")
	c.control(1, "exit")
	if status, _ := c.closedWith(); status != websocket.StatusNormalClosure {
		t.Errorf("closed with %d when the kernel exited, want 1000", status)
	}
	w.status(mark, w.create.KernelID, domain.PhaseExited)
	if _, resp, err := w.dial(w.terminalPath(uuid.New(), ""), nil); err == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("a terminal of an exited kernel: %v; want 409", err)
	}
}

// The agent stopping ends its terminals (a restarted agent could not
// attach them again): the client is told, the shell is gone, and the
// kernel runs on.
func TestTerminalAgentStops(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, nil)
	c, _ := w.open(uuid.New(), "")
	c.typeIn("echo up\r")
	c.shows("up")
	w.stop()
	c.control(1, "exit")
	if status, reason := c.closedWith(); status != websocket.StatusNormalClosure || !strings.Contains(reason, "agent stopped") {
		t.Errorf("closed with %d %q when the agent stopped", status, reason)
	}
	term, err := w.rt.ExecTerminal(w.ctx, runtime.ContainerName(w.create.KernelID.String()), runtime.TerminalSpec{Command: []string{"sh", "-c", "ps -o args"}})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	ps, err := io.ReadAll(term)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ps), "/bin/sh") || !strings.Contains(string(ps), "sleep 600") {
		t.Errorf("processes after the agent stopped (want the kernel's, not the terminal's shell):\n%s", ps)
	}
}
