package appproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// CookieName is the app cookie's name; its Path scopes it to one app of
// one session, so each app the browser opened has its own.
const CookieName = "cairn_app"

// Defaults of Config.
const (
	DefaultCookieTTL     = 12 * time.Hour
	DefaultActivityEvery = 30 * time.Second
)

// Route is where an app of a session runs now, as the read models say.
type Route struct {
	KernelID uuid.UUID
	AgentID  string
	// Port is the app's container port; 0 for the terminal.
	Port int
	// HostPort is the port the agent published Port on, on its loopback:
	// the app sees it in its Host header, as if reached there (0: Port).
	HostPort int
	// OwnsRoot says the app knows nothing of its path on the proxy: it is
	// sent its requests with the app's prefix removed, and the redirects
	// it answers get the prefix back (a pre-opened port: whatever the user
	// runs there). Other apps (an image's service ports) get their full
	// path and are started with it as their base path.
	OwnsRoot bool
}

// Routes finds an app's route in the read models. It returns a
// domain.ErrNotFound error when the session does not exist, does not run,
// or has no such app; app TerminalApp means the session's main kernel.
type Routes interface {
	Route(ctx context.Context, session uuid.UUID, app string) (Route, error)
}

// Addresses tells the base URL of an agent's HTTP endpoint.
type Addresses interface {
	Address(agentID string) (string, bool)
}

// Signer signs a request to an agent's endpoint as the manager does, so
// the agent lets it through.
type Signer func(req *http.Request, agentID string) error

// Recorder writes a record into the audit trail (the access log).
type Recorder func(ctx context.Context, rec audit.Record) error

// Config is what a Proxy needs.
type Config struct {
	Keys   *Keyring
	Routes Routes
	Agents Addresses
	Sign   Signer
	// Record receives the proxy's audit records: an app opened (a ticket
	// used), a WebSocket closed, and app traffic at most every
	// ActivityEvery per session and app (which keeps the session from
	// idling out). Nil: nothing is recorded.
	Record Recorder
	Logger *slog.Logger
	// CookieSecure marks the app cookie Secure (the proxy is served over
	// TLS, or behind a TLS terminator).
	CookieSecure bool
	// CookieTTL is how long an app cookie lets its browser in (default
	// DefaultCookieTTL); the session's end closes the app sooner.
	CookieTTL     time.Duration
	ActivityEvery time.Duration
	// Transport reaches the agents for terminals (default: a clone of
	// http.DefaultTransport); apps are reached through tunnels the proxy
	// dials itself (with Transport's TLS settings when it is an
	// *http.Transport).
	Transport http.RoundTripper
	// TerminalPage serves the terminal's page and its assets (the Web-UI's
	// xterm.js page, package web) under the terminal's app path, which the
	// proxy strips; its WebSocket is the path's "socket". Nil: only the
	// ticket WebSocket at TerminalPath.
	TerminalPage http.Handler
	// PublicHost is the proxy's host[:port] as browsers reach it, when a
	// proxy in front changes the Host header: a write or WebSocket with
	// the app cookie must come from a page of this origin (or of the
	// request's Host).
	PublicHost string
	// Registerer receives the proxy's metrics (nil: none).
	Registerer prometheus.Registerer
	// Domain turns on the subdomain mode (see HostLabel): a request whose
	// Host is <label>.<Domain> is for that one app, served at its root.
	// Empty: apps are served under their paths only.
	Domain string
	Now    func() time.Time
}

// Proxy is the app proxy's HTTP handler. It holds no route of its own:
// every request is checked against its grant and routed by the read
// models, so a restarted proxy serves the same URLs at once.
type Proxy struct {
	cfg Config
	log *slog.Logger
	rp  *httputil.ReverseProxy
	// apps forwards to apps through tunnels (tunnel.go).
	apps    *httputil.ReverseProxy
	tunnels tunnels
	used    *usedTickets
	mux     *http.ServeMux
	metrics *metrics

	mu       sync.Mutex
	activity map[activityKey]time.Time
}

type activityKey struct {
	session uuid.UUID
	app     string
}

// New builds a Proxy.
func New(cfg Config) (*Proxy, error) {
	var errs []error
	if cfg.Keys == nil {
		errs = append(errs, errors.New("appproxy: no Keys"))
	}
	if cfg.Routes == nil {
		errs = append(errs, errors.New("appproxy: no Routes"))
	}
	if cfg.Agents == nil {
		errs = append(errs, errors.New("appproxy: no Agents"))
	}
	if cfg.Sign == nil {
		errs = append(errs, errors.New("appproxy: no Sign: agents answer only signed requests"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CookieTTL <= 0 {
		cfg.CookieTTL = DefaultCookieTTL
	}
	if cfg.ActivityEvery <= 0 {
		cfg.ActivityEvery = DefaultActivityEvery
	}
	if cfg.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		t.Proxy = nil
		cfg.Transport = t
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg, log: cfg.Logger.With("component", "app-proxy"), used: newUsedTickets(), metrics: m,
		activity: map[activityKey]time.Time{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamError,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
	p.apps = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      tunnelRoundTripper{},
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamError,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		BufferPool:     copyBuffers,
	}
	p.rp.BufferPool = copyBuffers
	p.mux = http.NewServeMux()
	p.mux.HandleFunc("/v1/sessions/{id}/apps/{app}/{rest...}", p.serveApp)
	p.mux.HandleFunc("/v1/sessions/{id}/apps/{app}", func(w http.ResponseWriter, r *http.Request) {
		// The app lives under its path with a slash; relative links need it.
		u := *r.URL
		u.Path += "/"
		http.Redirect(w, r, u.RequestURI(), http.StatusPermanentRedirect)
	})
	p.mux.HandleFunc("/v1/sessions/{id}/terminal", p.serveTerminal)
	p.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	p.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.problem(w, r, domain.NotFound("app.proxy", "route"))
	})
	return p, nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.cfg.Domain != "" {
		if session, app, ok, under := onHost(r.Host, p.cfg.Domain); ok {
			p.serveHost(w, r, session, app)
			return
		} else if under {
			p.refuseHost(w, r)
			return
		}
	}
	p.mux.ServeHTTP(w, r)
}

// upstream is what rewrite needs to know of a request: set in its
// context by serveApp and serveTerminal.
type upstream struct {
	target *url.URL
	// signature is the manager's signature of a request to the agent's
	// endpoint (the terminal); empty through a tunnel.
	signature string
	grant     Grant
	agentID   string
	ownsRoot  bool
	// onHost: the request came to the app's own host (subdomain mode).
	onHost bool
	// tunnel carries an app's request, and token is its kernel's app
	// token (added as the agent adds it on its own app route).
	tunnel *tunnelSet
	token  string
}

type upstreamKey struct{}

func (p *Proxy) serveApp(w http.ResponseWriter, r *http.Request) {
	session, app, ok := p.target(w, r, r.PathValue("app"))
	if !ok {
		return
	}
	if app == TerminalApp && r.PathValue("rest") == terminalSocket && !isUpgrade(r) {
		p.upgradeRequired(w, r) // before the grant: a ticket is not spent on it
		return
	}
	g, fromTicket, ok := p.grant(w, r, session, app)
	if !ok {
		return
	}
	if fromTicket && !isUpgrade(r) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		p.exchangeTicket(w, r, g, AppPath(session, app))
		return
	}
	route, ok := p.route(w, r, g)
	if !ok {
		return
	}
	if app == TerminalApp {
		if r.PathValue("rest") == terminalSocket {
			p.forwardTerminal(w, r, g, route)
			return
		}
		p.serveTerminalPage(w, r, g)
		return
	}
	if route.Port <= 0 {
		p.problem(w, r, domain.NotFound("app.proxy", "app"))
		return
	}
	q := r.URL.Query()
	q.Del(TicketParam)
	path := r.URL.EscapedPath()
	if route.OwnsRoot {
		path = "/" + strings.TrimPrefix(path, AppPath(session, app))
	}
	p.forwardApp(w, r, g, route, appTarget(route, path, q))
}

// appTarget is the URL an app's request is sent to through its tunnel:
// path (escaped) and query q, and as its host what the app sees in Host,
// the published port on the agent's loopback.
func appTarget(route Route, path string, q url.Values) *url.URL {
	host := route.HostPort
	if host <= 0 {
		host = route.Port
	}
	target := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(host)), RawQuery: q.Encode()}
	if unescaped, err := url.PathUnescape(path); err == nil {
		target.Path, target.RawPath = unescaped, path
	} else {
		target.Path = path
	}
	return target
}

// forwardApp sends the request to the app through a tunnel to its port
// on the agent that runs the route's kernel, at target (the app's path and
// query; its host is what the app sees in Host).
func (p *Proxy) forwardApp(w http.ResponseWriter, r *http.Request, g Grant, route Route, target *url.URL) {
	base, ok := p.cfg.Agents.Address(route.AgentID)
	if !ok {
		p.noAddress(w, r, route.AgentID)
		return
	}
	ts := p.tunnel(tunnelKey{base: strings.TrimRight(base, "/"), agentID: route.AgentID, kernel: route.KernelID, port: route.Port})
	up := &upstream{target: target, grant: g, agentID: route.AgentID, ownsRoot: route.OwnsRoot, tunnel: ts,
		onHost: r.Context().Value(onHostKey{}) != nil}
	ctx := context.WithValue(r.Context(), upstreamKey{}, up)
	token, err := ts.appToken(ctx)
	if err != nil {
		p.upstreamError(w, r.WithContext(ctx), err)
		return
	}
	up.token = token
	p.touch(r, g)
	p.serveUpstream(w, r.WithContext(ctx), p.apps, g)
}

// tunnelRoundTripper sends a request through the tunnels of its
// upstream's app.
type tunnelRoundTripper struct{}

func (tunnelRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	up := req.Context().Value(upstreamKey{}).(*upstream)
	return up.tunnel.transport.RoundTrip(req)
}

// copyBuffers are the buffers the reverse proxies copy bodies with.
var copyBuffers = &bufferPool{}

type bufferPool struct{ sync.Pool }

func (b *bufferPool) Get() []byte {
	if buf, ok := b.Pool.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.Pool.Put(&buf) }

// terminalSocket is the terminal page's WebSocket, under the terminal's
// app path (so the app cookie reaches it).
const terminalSocket = "socket"

// serveTerminal serves /v1/sessions/{id}/terminal: the terminal's
// WebSocket for clients that hold a ticket (scripts; the Web-UI's page
// uses the app path's socket with its cookie).
func (p *Proxy) serveTerminal(w http.ResponseWriter, r *http.Request) {
	session, _, ok := p.target(w, r, TerminalApp)
	if !ok {
		return
	}
	if !isUpgrade(r) {
		p.upgradeRequired(w, r) // before the grant: a ticket is not spent on it
		return
	}
	if r.URL.Query().Get(TicketParam) == "" {
		p.grantRefused(w, r, session, TerminalApp, errors.New("no ticket"))
		return
	}
	g, _, ok := p.grant(w, r, session, TerminalApp)
	if !ok {
		return
	}
	route, ok := p.route(w, r, g)
	if !ok {
		return
	}
	p.forwardTerminal(w, r, g, route)
}

// forwardTerminal forwards a terminal WebSocket to the agent: the
// terminal the client names (a UUID it chose: the same one reattaches to
// the same shell), at cols x rows.
func (p *Proxy) forwardTerminal(w http.ResponseWriter, r *http.Request, g Grant, route Route) {
	q := r.URL.Query()
	term, err := uuid.Parse(q.Get("terminal"))
	if err != nil {
		p.problem(w, r, domain.Invalid("app.terminal", "terminal", "name the terminal to open or reattach with a UUID the client chooses"))
		return
	}
	out := url.Values{}
	for _, k := range []string{"cols", "rows"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	target := "/kernels/" + route.KernelID.String() + "/terminals/" + term.String()
	if enc := out.Encode(); enc != "" {
		target += "?" + enc
	}
	p.forward(w, r, g, route, target)
}

// serveTerminalPage serves the terminal's page and its assets
// (Config.TerminalPage) under the terminal's app path.
func (p *Proxy) serveTerminalPage(w http.ResponseWriter, r *http.Request, g Grant) {
	session := g.Session
	if p.cfg.TerminalPage == nil {
		p.problem(w, r, domain.Errorf("app.terminal", domain.KindNotFound, "this proxy serves no terminal page: use the WebSocket at %s", TerminalPath(session)))
		return
	}
	p.touch(r, g)
	http.StripPrefix(strings.TrimSuffix(AppPath(session, TerminalApp), "/"), p.cfg.TerminalPage).ServeHTTP(w, r)
}

func (p *Proxy) upgradeRequired(w http.ResponseWriter, r *http.Request) {
	p.statusProblem(w, r, http.StatusUpgradeRequired, "upgrade-required",
		"the terminal is a WebSocket, and this request came without its Upgrade header: "+
			"a proxy or load balancer between the browser and Cairn's app proxy dropped it "+
			"(let it pass Upgrade and Connection headers, e.g. nginx: proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\")")
}

// target parses the session id of the path; app is the app's name.
func (p *Proxy) target(w http.ResponseWriter, r *http.Request, app string) (uuid.UUID, string, bool) {
	session, err := uuid.Parse(r.PathValue("id"))
	if err != nil || app == "" || strings.ContainsAny(app, "/?#") {
		p.problem(w, r, domain.NotFound("app.proxy", "app"))
		return uuid.Nil, "", false
	}
	return session, app, true
}

// grant finds the request's grant for app of session: a ticket in the
// query (used once) or the app cookie. Anything else, including a grant
// for another session or app, is answered as if the app did not exist.
func (p *Proxy) grant(w http.ResponseWriter, r *http.Request, session uuid.UUID, app string) (Grant, bool, bool) {
	now := p.cfg.Now()
	refuse := func(why error) (Grant, bool, bool) {
		p.grantRefused(w, r, session, app, why)
		return Grant{}, false, false
	}
	if sealed := r.URL.Query().Get(TicketParam); sealed != "" {
		g, err := p.cfg.Keys.Open(sealed, now)
		switch {
		case err != nil:
			return refuse(err)
		case g.Kind != KindTicket || g.Session != session || g.App != app:
			return refuse(fmt.Errorf("a ticket for %s/%s", g.Session, g.App))
		case !p.used.use(g.Nonce, time.Unix(g.Expires, 0), now):
			return refuse(errors.New("ticket used already"))
		}
		p.record(r, g, "app.open "+app, http.StatusOK)
		return g, true, true
	}
	if c, err := r.Cookie(CookieName); err == nil {
		g, err := p.cfg.Keys.Open(c.Value, now)
		switch {
		case err != nil:
			return refuse(err)
		case g.Kind != KindCookie || g.Session != session || g.App != app:
			return refuse(fmt.Errorf("a cookie for %s/%s", g.Session, g.App))
		}
		if err := p.checkOrigin(r); err != nil {
			return refuse(err)
		}
		return g, false, true
	}
	return refuse(errors.New("no ticket and no cookie"))
}

// checkOrigin refuses a request the browser made on behalf of another
// site's page with the app cookie: a write or a WebSocket (which the
// browser opens from any page) whose Origin is not the proxy's own, or
// that Sec-Fetch-Site says is cross-site. Reads and navigations pass: a
// link from the Web-UI is one.
func (p *Proxy) checkOrigin(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		if !isUpgrade(r) {
			return nil
		}
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return errors.New("a cross-site write or WebSocket")
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil // not a browser's cross-origin request
	}
	u, err := url.Parse(origin)
	if err != nil || (!strings.EqualFold(u.Host, r.Host) && (p.cfg.PublicHost == "" || !strings.EqualFold(u.Host, p.cfg.PublicHost))) {
		return fmt.Errorf("a write or WebSocket from origin %q", origin)
	}
	return nil
}

// grantRefused answers a request without a good grant: 404, as for an
// app that does not exist; why is only logged.
func (p *Proxy) grantRefused(w http.ResponseWriter, r *http.Request, session uuid.UUID, app string, why error) {
	p.log.Info("app request refused", "session_id", session, "app", app, "path", r.URL.Path, "remote", r.RemoteAddr, "error", why)
	p.metrics.refused.Inc()
	p.problem(w, r, domain.Errorf("app.proxy", domain.KindNotFound,
		"no app %q of session %s for you: open it from Cairn (POST /v1/sessions/{id}/apps/{app}), which gives a fresh link", app, session))
}

// route asks the read models where the grant's app runs now.
func (p *Proxy) route(w http.ResponseWriter, r *http.Request, g Grant) (Route, bool) {
	route, err := p.cfg.Routes.Route(r.Context(), g.Session, g.App)
	if err != nil {
		if !errors.Is(err, domain.ErrNotFound) {
			p.log.Warn("app route lookup failed", "session_id", g.Session, "app", g.App, "error", err)
		}
		p.problem(w, r, err)
		return Route{}, false
	}
	return route, true
}

// forward sends the request to the agent that runs the route's kernel,
// at path (and query) target of the agent's endpoint.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, g Grant, route Route, target string) {
	base, ok := p.cfg.Agents.Address(route.AgentID)
	if !ok {
		p.noAddress(w, r, route.AgentID)
		return
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + target)
	if err != nil {
		p.problem(w, r, fmt.Errorf("appproxy: agent %s address %q: %w", route.AgentID, base, err))
		return
	}
	signed, _ := http.NewRequest(r.Method, u.String(), nil)
	if err := p.cfg.Sign(signed, route.AgentID); err != nil {
		p.problem(w, r, fmt.Errorf("appproxy: sign: %w", err))
		return
	}
	p.touch(r, g)
	up := &upstream{target: u, signature: signed.Header.Get(signatureHeader), grant: g, agentID: route.AgentID, ownsRoot: route.OwnsRoot,
		onHost: r.Context().Value(onHostKey{}) != nil}
	p.serveUpstream(w, r.WithContext(context.WithValue(r.Context(), upstreamKey{}, up)), p.rp, g)
}

// serveUpstream runs rp on r (whose context holds its upstream),
// counting and recording WebSockets.
func (p *Proxy) serveUpstream(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy, g Grant) {
	upgrade := isUpgrade(r)
	if upgrade {
		p.metrics.sockets.Inc()
	}
	rp.ServeHTTP(w, r)
	if upgrade {
		p.metrics.sockets.Dec()
		p.record(r, g, "app.close "+g.App, http.StatusSwitchingProtocols)
	}
}

func (p *Proxy) noAddress(w http.ResponseWriter, r *http.Request, agentID string) {
	p.problem(w, r, domain.Errorf("app.proxy", domain.KindUnavailable,
		"agent %s has announced no HTTP endpoint (started without --listen), so its apps cannot be reached", agentID))
}

// signatureHeader is the header the manager's signature travels in
// (busauth.ManagerSignatureHeader; the proxy copies whatever Sign set).
const signatureHeader = "Cairn-Manager-Signature"

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	up := pr.In.Context().Value(upstreamKey{}).(*upstream)
	pr.Out.URL = up.target
	pr.Out.Host = ""
	pr.SetXForwarded()
	if !up.onHost || !up.ownsRoot {
		pr.Out.Header.Set("X-Forwarded-Prefix", AppPath(up.grant.Session, up.grant.App))
	}
	// The user's Cairn credentials are for Cairn, not for the app.
	stripCairnCookies(pr.Out.Header)
	for k := range pr.Out.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Cairn-") {
			pr.Out.Header.Del(k)
		}
	}
	if up.tunnel != nil {
		// The app's own request: what the agent adds on its app route.
		if up.token != "" && pr.Out.Header.Get("Authorization") == "" {
			pr.Out.Header.Set("Authorization", "token "+up.token)
		}
		return
	}
	pr.Out.Header.Set(signatureHeader, up.signature)
}

// stripCairnCookies removes the cookies named cairn_* from h's Cookie
// headers, keeping the app's own.
func stripCairnCookies(h http.Header) {
	var kept []string
	for _, line := range h.Values("Cookie") {
		for _, part := range strings.Split(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
			if name != "" && !strings.HasPrefix(name, "cairn_") {
				kept = append(kept, strings.TrimSpace(part))
			}
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// modifyResponse keeps the app from setting cookies named like Cairn's
// and counts the traffic of an upgraded connection as activity.
func (p *Proxy) modifyResponse(res *http.Response) error {
	up := res.Request.Context().Value(upstreamKey{}).(*upstream)
	if cookies := res.Header.Values("Set-Cookie"); len(cookies) > 0 {
		res.Header.Del("Set-Cookie")
		for _, c := range cookies {
			if !strings.HasPrefix(strings.TrimSpace(c), "cairn_") {
				res.Header.Add("Set-Cookie", c)
			}
		}
	}
	res.Header.Del(signatureHeader)
	if loc := res.Header.Get("Location"); up.ownsRoot && !up.onHost && strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		// The app redirects within its root: within its prefix here.
		res.Header.Set("Location", strings.TrimSuffix(AppPath(up.grant.Session, up.grant.App), "/")+loc)
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		if rwc, ok := res.Body.(io.ReadWriteCloser); ok {
			res.Body = &activeConn{ReadWriteCloser: rwc, touch: func() { p.touch(res.Request, up.grant) }}
		}
	}
	return nil
}

// activeConn reports traffic on an upgraded connection.
type activeConn struct {
	io.ReadWriteCloser
	touch func()
}

func (c *activeConn) Read(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *activeConn) Write(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	up, _ := r.Context().Value(upstreamKey{}).(*upstream)
	if errors.Is(err, context.Canceled) {
		return // the client went away
	}
	agent := ""
	if up != nil {
		agent = up.agentID
	}
	if te, ok := asTunnelError(err); ok {
		p.metrics.upstreamErrors.Inc()
		p.log.Info("tunnel refused", "agent_id", te.agentID, "path", r.URL.Path, "status", te.status, "detail", te.detail)
		status, kind := http.StatusBadGateway, "bad-gateway"
		if te.status == http.StatusNotFound {
			// The read models ran ahead of the agent (or behind it).
			status, kind = http.StatusNotFound, "not-found"
		}
		p.statusProblem(w, r, status, kind, te.detail)
		return
	}
	p.log.Warn("agent unreachable", "agent_id", agent, "path", r.URL.Path, "error", err)
	p.metrics.upstreamErrors.Inc()
	if up != nil && up.tunnel != nil {
		p.statusProblem(w, r, http.StatusBadGateway, "bad-gateway", fmt.Sprintf("the app, through agent %s, did not answer", agent))
		return
	}
	p.statusProblem(w, r, http.StatusBadGateway, "bad-gateway", fmt.Sprintf("the agent %s that runs this app does not answer", agent))
}

// touch records app traffic for the grant's session at most every
// ActivityEvery: what keeps a session in use from idling out.
func (p *Proxy) touch(r *http.Request, g Grant) {
	now := p.cfg.Now()
	k := activityKey{g.Session, g.App}
	p.mu.Lock()
	last, seen := p.activity[k]
	fresh := !seen || now.Sub(last) >= p.cfg.ActivityEvery
	if fresh {
		p.activity[k] = now
		if len(p.activity) > 100_000 { // bounded: forget the old ones
			for key, at := range p.activity {
				if now.Sub(at) >= p.cfg.ActivityEvery {
					delete(p.activity, key)
				}
			}
		}
	}
	p.mu.Unlock()
	if fresh {
		p.record(r, g, "app.traffic "+g.App, http.StatusOK)
	}
}

// record writes an audit record about the grant's session.
func (p *Proxy) record(r *http.Request, g Grant, action string, status int) {
	if p.cfg.Record == nil {
		return
	}
	rec := audit.Record{Time: p.cfg.Now().UTC(), UserID: g.User.String(), Action: action, EntityType: "session",
		EntityID: g.Session.String(), ClientIP: clientIP(r), Outcome: audit.Success, Status: status,
		RequestID: uuid.NewString()}
	if err := p.cfg.Record(context.WithoutCancel(r.Context()), rec); err != nil {
		p.log.Warn("cannot record app access in the audit trail", "action", action, "session_id", g.Session, "error", err)
	}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// problem answers err as problem details, without the query (a ticket
// never echoes back).
func (p *Proxy) problem(w http.ResponseWriter, r *http.Request, err error) {
	r2 := *r
	u := *r.URL
	u.RawQuery = ""
	r2.URL = &u
	httpapi.WriteProblem(w, &r2, err)
}

// statusProblem answers a problem of the HTTP layer that has no domain
// kind (426, 502).
func (p *Proxy) statusProblem(w http.ResponseWriter, r *http.Request, status int, kind, detail string) {
	w.Header().Set("Content-Type", httpapi.ProblemContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(httpapi.Problem{Type: "https://cairn.dev/problems/" + kind, Title: http.StatusText(status),
		Status: status, Detail: detail, Instance: r.URL.Path, Kind: kind})
}

func isUpgrade(r *http.Request) bool {
	return httpapi.HeaderHasToken(r.Header, "Connection", "upgrade") && r.Header.Get("Upgrade") != ""
}

// usedTickets remembers the nonces of used tickets until they expire, so
// a ticket opens one request only (per proxy process: a restarted proxy
// forgets them, and a ticket lives a minute).
type usedTickets struct {
	mu    sync.Mutex
	nonce map[string]time.Time
}

func newUsedTickets() *usedTickets { return &usedTickets{nonce: map[string]time.Time{}} }

// use marks nonce used and reports whether it was not before.
func (u *usedTickets) use(nonce string, expires, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, seen := u.nonce[nonce]; seen {
		return false
	}
	if len(u.nonce) >= 4096 {
		for n, exp := range u.nonce {
			if !now.Before(exp) {
				delete(u.nonce, n)
			}
		}
	}
	u.nonce[nonce] = expires
	return true
}
