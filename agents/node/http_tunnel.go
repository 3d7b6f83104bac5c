package node

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// TunnelProtocol is the Upgrade token of the raw TCP tunnel to a published
// port (GET /kernels/{id}/ports/{port}/tunnel).
const TunnelProtocol = protocol.TunnelUpgrade

// serveTunnel answers GET /kernels/{id}/ports/{port}/tunnel: with the
// upgrade to TunnelProtocol asked, it answers 101 (with the kernel's app
// token when the request asks for it: protocol.AppTokenHeader) and then
// carries bytes both ways between the caller's connection and the
// published port, until either side closes (see Handler).
func (a *Agent) serveTunnel(w http.ResponseWriter, r *http.Request) {
	const op = "agent.tunnel"
	id, port, hostPort, apps, err := a.publishedPort(r, op)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	if !httpapi.HeaderHasToken(r.Header, "Connection", "upgrade") || !httpapi.HeaderHasToken(r.Header, "Upgrade", TunnelProtocol) {
		writeProblemStatus(w, r, http.StatusUpgradeRequired, domain.KindInvalid,
			"a tunnel needs the headers Connection: Upgrade and Upgrade: "+TunnelProtocol+
				"; without them (a proxy or load balancer in the way may strip them) there is nothing to tunnel")
		return
	}
	dialer := net.Dialer{Timeout: 5 * time.Second}
	app, err := dialer.DialContext(r.Context(), "tcp", net.JoinHostPort(appHost, strconv.Itoa(hostPort)))
	if err != nil {
		writeBadGateway(w, r, "port "+strconv.Itoa(port)+" of kernel "+id.String()+
			" did not take the connection: the app is not listening yet (still starting) or has stopped")
		return
	}
	defer app.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		httpapi.WriteProblem(w, r, domain.Errorf(op, domain.KindInternal, "the connection cannot be taken over"))
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		a.log.Warn("tunnel: hijack failed", "kernel_id", id, "port", port, "error", err)
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Time{}) // the server's read timeouts are for requests, not tunnels
	head := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + TunnelProtocol + "\r\n"
	if r.Header.Get(protocol.AppTokenHeader) == protocol.AppTokenWanted && apps.token != "" {
		head += protocol.AppTokenHeader + ": " + apps.token + "\r\n"
	}
	if _, err := buf.WriteString(head + "\r\n"); err != nil {
		return
	}
	if err := buf.Flush(); err != nil {
		return
	}
	a.log.Info("tunnel opened", "kernel_id", id, "port", port)
	splice(conn, buf.Reader, app)
	a.log.Info("tunnel closed", "kernel_id", id, "port", port)
}

// splice copies client → app (starting with what the client sent after
// its request head, already buffered in in) and app → client, until both
// directions end; an end in one direction is passed on as a half close.
func splice(client net.Conn, in *bufio.Reader, app net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(app, in)
		closeWrite(app)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(client, app)
		closeWrite(client)
	}()
	wg.Wait()
}

// closeWrite half-closes a TCP connection (the peer reads EOF), or closes
// any other.
func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}

// writeProblemStatus answers a problem with a status no error kind maps to.
func writeProblemStatus(w http.ResponseWriter, r *http.Request, status int, kind domain.Kind, detail string) {
	p := httpapi.Problem{Type: "https://cairn.dev/problems/" + kind.String(), Title: http.StatusText(status),
		Status: status, Kind: kind.String(), Detail: detail, Instance: r.URL.RequestURI()}
	w.Header().Set("Content-Type", httpapi.ProblemContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}
