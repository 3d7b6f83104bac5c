package node

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// Handler is the agent's HTTP endpoint, served on Config.Listen:
//
//	GET /kernels/{kernel id}/logs?tail=<lines>&max_bytes=<bytes>
//	    200 text/plain: the kernel's logs (see Logs)
//	GET /kernels/{kernel id}/logs?offset=<bytes>&limit=<bytes>&follow=<bool>
//	    200 text/plain: a byte range of the kernel's log, streamed (see
//	    StreamLogs; headers and trailers in agents/protocol)
//	ANY /kernels/{kernel id}/apps/{container port}/{path...}
//	    the kernel's app on that service port: the request is forwarded
//	    to http://127.0.0.1:<host port>/<path>?<query> (the host port the
//	    agent published the container port on), the answer streamed back
//	    unbuffered; WebSocket upgrades pass through. Hop-by-hop headers,
//	    every Cairn-* header (the signature among them) and cookies named
//	    cairn_* are not forwarded; X-Forwarded-Host, -Proto and -Prefix
//	    are the ones the caller sent (else the agent's view), and the
//	    caller's address is appended to X-Forwarded-For. A request
//	    without an Authorization header gets "Authorization: token <app
//	    token>", the kernel's secret (CAIRN_APP_TOKEN inside it), so apps
//	    such as Jupyter need no token from the user. The app may not set
//	    cairn_* cookies. 404 for a kernel this agent does not run or a
//	    port it did not publish; 502 when nothing answers on the port
//	    (the app is not listening yet).
//	GET /kernels/{kernel id}/ports/{container port}/tunnel
//	    with Connection: Upgrade and Upgrade: cairn-tunnel (TunnelProtocol):
//	    101, then the connection carries raw bytes both ways to the
//	    published port until either side closes: the app proxy speaks
//	    HTTP to the app through it, many requests per tunnel. A request
//	    with Cairn-App-Token: want (protocol.AppTokenHeader) gets the
//	    kernel's app token in the 101's Cairn-App-Token header, for the
//	    caller to add as the agent does above. 426 without the upgrade
//	    headers, 404 and 502 as above.
//	GET /kernels/{kernel id}/terminals/{terminal id}?cols=<n>&rows=<n>
//	    a WebSocket to the terminal (a shell in the kernel) of that id, a
//	    UUID the client chooses: started if there is none, attached again
//	    if there is (see below)
//	GET /kernels/{kernel id}/terminals
//	    200 application/json [{"id","created","attached","last_activity"}]
//	GET /healthz
//	    200 application/json {"status":"ok","agent_id":...}
//	GET /metrics
//	    the process's Prometheus metrics
//
// A terminal's WebSocket carries the terminal's bytes, raw, in binary
// frames both ways, and JSON control messages in text frames: from the
// client {"type":"resize","cols":N,"rows":N}; from the agent first
// {"type":"attached","terminal":"<id>","new":true|false}, then the
// scrollback (the last Config.TerminalScrollback bytes) and the live
// output, and {"type":"exit","code":N} once the shell has ended, followed
// by close status 1000. One client at a time: a second attach takes the
// terminal over and the first is closed with status 4001. The agent pings
// every Config.TerminalPingInterval and drops a client that does not
// answer. The terminal lives on without a client for
// Config.TerminalDetachTimeout; it ends with its shell, its kernel, or the
// agent. Origin is not checked: the manager's signature is, and the app
// proxy in front checks browsers' origins.
//
// Errors are RFC 9457 problem details (application/problem+json): 400 for
// a bad kernel id, port or option (naming it), 404 for a kernel without
// logs or apps (or not running) here, 409 for a terminal of a kernel that
// is not running or has Config.TerminalsPerKernel terminals already, 426
// for a terminal request without the WebSocket upgrade (a proxy stripped
// it), 502 for an app that does not answer, 503 when Podman does not
// answer. /kernels/ answers only the manager: a request
// must carry the manager's signature (busauth.ManagerSignatureHeader, made
// with the key that issued the agent's bus credentials), or it gets 401;
// an app proxy's own key, granted by that key, is accepted on the apps and
// terminal routes only (proxyRoutes).
// /healthz and /metrics tell nothing about sessions and stay open.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kernels/{id}/logs", a.managerOnly(a.serveLogs))
	mux.HandleFunc("/kernels/{id}/apps/{port}/{rest...}", a.managerOnly(a.serveApp))
	mux.HandleFunc("GET /kernels/{id}/ports/{port}/tunnel", a.managerOnly(a.serveTunnel))
	mux.HandleFunc("GET /kernels/{id}/terminals", a.managerOnly(a.serveTerminals))
	mux.HandleFunc("GET /kernels/{id}/terminals/{terminal}", a.managerOnly(a.serveTerminal))
	mux.Handle("GET /metrics", promhttp.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "agent_id": a.cfg.AgentID, "version": a.cfg.Version})
	})
	return mux
}

// managerOnly lets through the requests the manager signed for this agent.
func (a *Agent) managerOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.verifier == nil {
			httpapi.WriteProblem(w, r, domain.Errorf("agent.authenticate", domain.KindUnauthenticated,
				"this agent has no bus credentials, hence no manager key to check requests with"))
			return
		}
		if err := a.verifier.Verify(r); err != nil {
			a.log.Warn("request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "error", err)
			httpapi.WriteProblem(w, r, err)
			return
		}
		next(w, r)
	}
}

func (a *Agent) serveLogs(w http.ResponseWriter, r *http.Request) {
	const op = "agent.logs"
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		httpapi.WriteProblem(w, r, domain.Invalid(op, "id", "%q is not a kernel id", r.PathValue("id")))
		return
	}
	if r.URL.Query().Has("offset") {
		a.serveLogRange(w, r, id)
		return
	}
	var opts runtime.LogOptions
	for _, p := range []struct {
		name string
		dst  *int
	}{{"tail", &opts.Tail}, {"max_bytes", &opts.MaxBytes}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			httpapi.WriteProblem(w, r, domain.Invalid(op, p.name, "%q is not a non-negative integer", v))
			return
		}
		*p.dst = n
	}
	logs, err := a.Logs(r.Context(), id, opts)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(logs)))
	_, _ = w.Write(logs)
}

// advertiseFor is the base URL of a listener: its address, with this
// machine's host name when it listens on every interface.
func advertiseFor(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil && name != "" {
			host = name
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
