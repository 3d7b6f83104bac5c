package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// statusTakenOver is the WebSocket close status of a client whose
// terminal another client attached.
const statusTakenOver websocket.StatusCode = 4001

// terminalReadLimit bounds one message from a client (a large paste
// comes as one).
const terminalReadLimit = 1 << 20

// terminalWriteTimeout bounds one write to a client; a client that takes
// longer is dropped (the terminal lives on, detached).
const terminalWriteTimeout = 30 * time.Second

// Control messages, the text frames of the terminal protocol.
type (
	// controlMessage is any control message's type, to dispatch on.
	controlMessage struct {
		Type string `json:"type"`
	}
	// resizeMessage, from the client: the terminal's new size.
	resizeMessage struct {
		Type string `json:"type"`
		Cols int    `json:"cols"`
		Rows int    `json:"rows"`
	}
)

func attachedMessage(id uuid.UUID, created bool) []byte {
	b, _ := json.Marshal(struct {
		Type     string    `json:"type"`
		Terminal uuid.UUID `json:"terminal"`
		New      bool      `json:"new"`
	}{"attached", id, created})
	return b
}

func exitMessage(code int) []byte {
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		Code int    `json:"code"`
	}{"exit", code})
	return b
}

// serveTerminal answers GET /kernels/{id}/terminals/{terminal}: the
// WebSocket of a terminal (see Handler for the protocol).
func (a *Agent) serveTerminal(w http.ResponseWriter, r *http.Request) {
	const op = "agent.terminal"
	key, err := terminalKeyOf(r)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	var size [2]int
	for i, name := range []string{"cols", "rows"} {
		v := r.URL.Query().Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > runtime.MaxTerminalSize {
			httpapi.WriteProblem(w, r, domain.Invalid(op, name, "%q is not a number from 1 to %d", v, runtime.MaxTerminalSize))
			return
		}
		size[i] = n
	}
	cols, rows := size[0], size[1]
	if !httpapi.HeaderHasToken(r.Header, "Connection", "upgrade") || !httpapi.HeaderHasToken(r.Header, "Upgrade", "websocket") {
		writeUpgradeRequired(w, r)
		return
	}
	t, created, err := a.openTerminal(r.Context(), key, cols, rows)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	// The agent trusts the manager's signature, checked already; the
	// proxy in front checks the browser's Origin, which it passes on.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		t.log.Warn("terminal WebSocket not accepted", "error", err)
		return
	}
	conn.SetReadLimit(terminalReadLimit)
	if !created && cols > 0 && rows > 0 {
		if err := t.tty.Resize(r.Context(), cols, rows); err != nil {
			t.log.Warn("terminal resize", "error", err)
		}
	}
	a.runClient(t, conn, created)
}

// serveTerminals answers GET /kernels/{id}/terminals.
func (a *Agent) serveTerminals(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		httpapi.WriteProblem(w, r, domain.Invalid("agent.terminals", "kernel", "%q is not a kernel id", r.PathValue("id")))
		return
	}
	list, err := a.Terminals(id)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	if list == nil {
		list = []TerminalInfo{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func terminalKeyOf(r *http.Request) (terminalKey, error) {
	const op = "agent.terminal"
	kernel, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return terminalKey{}, domain.Invalid(op, "kernel", "%q is not a kernel id", r.PathValue("id"))
	}
	id, err := uuid.Parse(r.PathValue("terminal"))
	if err != nil {
		return terminalKey{}, domain.Invalid(op, "terminal", "%q is not a terminal id (a UUID the client chooses)", r.PathValue("terminal"))
	}
	return terminalKey{kernel: kernel, id: id}, nil
}

// writeUpgradeRequired answers a terminal request that is not a WebSocket
// upgrade: most often a proxy or load balancer dropped the Upgrade and
// Connection headers on the way.
func writeUpgradeRequired(w http.ResponseWriter, r *http.Request) {
	const status = http.StatusUpgradeRequired
	p := httpapi.Problem{
		Type: "https://cairn.dev/problems/upgrade-required", Title: http.StatusText(status), Status: status,
		Kind: domain.KindInvalid.String(), Instance: r.URL.RequestURI(),
		Detail: "a terminal is a WebSocket, and this request has no WebSocket upgrade: its Upgrade or Connection " +
			"header was stripped, most likely by a proxy or load balancer between the browser and the agent. " +
			"Configure it to pass WebSocket upgrades on (nginx: proxy_http_version 1.1 and " +
			"proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\").",
	}
	w.Header().Set("Content-Type", httpapi.ProblemContentType)
	w.Header().Set("Upgrade", "websocket")
	w.Header().Set("Connection", "Upgrade")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// termFrame is one message to a client: a control message (a text
// frame), terminal output (a binary frame), or the close that ends it.
type termFrame struct {
	control []byte
	data    []byte
	close   *closeFrame
}

type closeFrame struct {
	status websocket.StatusCode
	reason string
}

// termClient is one attached WebSocket. Its writer sends the frames
// queued by the terminal in order; its reader (runClient) types input
// into the terminal and applies resizes.
type termClient struct {
	conn *websocket.Conn
	out  chan termFrame
	// gone is closed when the client is finished: nothing more is sent.
	gone     chan struct{}
	goneOnce sync.Once
}

// send queues f, unless the client is gone. It blocks while the queue is
// full: a slow client slows the terminal down rather than losing output.
func (c *termClient) send(f termFrame) {
	select {
	case c.out <- f:
	case <-c.gone:
	}
}

// finish closes the client normally after what is queued.
func (c *termClient) finish(reason string) {
	c.send(termFrame{close: &closeFrame{status: websocket.StatusNormalClosure, reason: reason}})
}

// finishWith closes the client at once, with status and reason.
func (c *termClient) finishWith(status websocket.StatusCode, reason string) {
	c.markGone()
	go func() { _ = c.conn.Close(status, reason) }()
}

func (c *termClient) markGone() { c.goneOnce.Do(func() { close(c.gone) }) }

// runClient attaches conn to t and serves it until either side ends it.
func (a *Agent) runClient(t *terminal, conn *websocket.Conn, created bool) {
	c := &termClient{conn: conn, out: make(chan termFrame, 64), gone: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { c.write(ctx) })
	wg.Go(func() { c.ping(ctx, a.cfg.TerminalPingInterval) })
	t.attach(c, created)

	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			break
		}
		switch typ {
		case websocket.MessageBinary:
			if err := t.input(c, data); err != nil {
				t.log.Warn("terminal input failed", "error", err)
			}
		case websocket.MessageText:
			if err := a.control(ctx, t, data); err != nil {
				c.finishWith(websocket.StatusInvalidFramePayloadData, err.Error())
			}
		}
	}
	t.detach(c)
	c.markGone()
	cancel()
	_ = conn.CloseNow()
	wg.Wait()
}

// control applies a control message from the client. A message that is
// not JSON is an error (the client is closed); an unknown type, or a
// resize to an impossible size, is ignored.
func (a *Agent) control(ctx context.Context, t *terminal, data []byte) error {
	rm, err := parseControl(data)
	if err != nil || rm == nil {
		return err
	}
	if err := t.tty.Resize(ctx, rm.Cols, rm.Rows); err != nil {
		t.log.Warn("terminal resize", "cols", rm.Cols, "rows", rm.Rows, "error", err)
	}
	return nil
}

// parseControl decodes a client's text frame: a resize, or nil for a
// type this agent does not know (a newer client's, ignored). A frame that
// is not a JSON control message is an error.
func parseControl(data []byte) (*resizeMessage, error) {
	var m controlMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("a text frame must be a JSON control message: %v", err)
	}
	if m.Type != "resize" {
		return nil, nil
	}
	var rm resizeMessage
	if err := json.Unmarshal(data, &rm); err != nil {
		return nil, fmt.Errorf("bad resize message: %v", err)
	}
	return &rm, nil
}

// write sends the queued frames in order until a close frame, a failed
// write, or the client is gone.
func (c *termClient) write(ctx context.Context) {
	for {
		select {
		case <-c.gone:
			return
		case f := <-c.out:
			if f.close != nil {
				c.markGone()
				_ = c.conn.Close(f.close.status, f.close.reason)
				return
			}
			typ, data := websocket.MessageBinary, f.data
			if f.control != nil {
				typ, data = websocket.MessageText, f.control
			}
			wctx, cancel := context.WithTimeout(ctx, terminalWriteTimeout)
			err := c.conn.Write(wctx, typ, data)
			cancel()
			if err != nil {
				c.markGone()
				_ = c.conn.CloseNow()
				return
			}
		}
	}
}

// ping pings the client every interval and drops it when a ping is not
// answered within the interval: the connection is dead (and, until it
// is found so, the terminal cannot be detached for its timeout).
func (c *termClient) ping(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.gone:
			return
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := c.conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			c.markGone()
			_ = c.conn.CloseNow()
			return
		}
	}
}
