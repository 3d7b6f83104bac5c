package appproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// Tunnels' limits.
const (
	// tunnelHandshake bounds a tunnel's upgrade: the agent's answer.
	tunnelHandshake = 10 * time.Second
	// tunnelIdle is how long an unused tunnel stays open for the next
	// request.
	tunnelIdle = 90 * time.Second
	// maxTunnelSets bounds the (agent, kernel, port) transports kept;
	// past it, those unused for tunnelIdle are dropped.
	maxTunnelSets = 1024
)

// tunnelKey names the app a set of tunnels reaches.
type tunnelKey struct {
	base    string // the agent's base URL
	agentID string
	kernel  uuid.UUID
	port    int
}

// tunnelSet is an http.Transport whose connections are tunnels to one
// app (GET /kernels/{k}/ports/{p}/tunnel on the agent, signed once per
// connection): the proxy speaks HTTP to the app through them, kept alive
// and reused, and the agent only carries bytes.
type tunnelSet struct {
	key       tunnelKey
	p         *Proxy
	transport *http.Transport

	// learning is held while a tunnel is opened to learn the token.
	learning sync.Mutex

	mu       sync.Mutex
	token    string // the kernel's app token, as the agent answered it
	learned  bool
	lastUsed time.Time
}

// tunnels are the proxy's tunnel sets.
type tunnels struct {
	mu   sync.Mutex
	sets map[tunnelKey]*tunnelSet
}

// tunnel returns the set of tunnels to key's app, made on first use.
func (p *Proxy) tunnel(key tunnelKey) *tunnelSet {
	now := p.cfg.Now()
	p.tunnels.mu.Lock()
	defer p.tunnels.mu.Unlock()
	if ts, ok := p.tunnels.sets[key]; ok {
		ts.mu.Lock()
		ts.lastUsed = now
		ts.mu.Unlock()
		return ts
	}
	if len(p.tunnels.sets) >= maxTunnelSets {
		for k, ts := range p.tunnels.sets {
			ts.mu.Lock()
			idle := now.Sub(ts.lastUsed) >= tunnelIdle
			ts.mu.Unlock()
			if idle {
				ts.transport.CloseIdleConnections()
				delete(p.tunnels.sets, k)
			}
		}
	}
	ts := &tunnelSet{key: key, p: p, lastUsed: now}
	ts.transport = &http.Transport{
		Proxy:               nil,
		DialContext:         ts.dial,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     tunnelIdle,
		DisableCompression:  true, // bodies pass as the app sent them
		ForceAttemptHTTP2:   false,
	}
	if p.tunnels.sets == nil {
		p.tunnels.sets = map[tunnelKey]*tunnelSet{}
	}
	p.tunnels.sets[key] = ts
	return ts
}

// CloseIdle closes the tunnels no request is using, and forgets every
// tunnel set: what a proxy that stops serving leaves open on the agents.
// Tunnels in use (WebSockets, requests under way) are left to end.
func (p *Proxy) CloseIdle() {
	p.tunnels.mu.Lock()
	defer p.tunnels.mu.Unlock()
	for k, ts := range p.tunnels.sets {
		ts.transport.CloseIdleConnections()
		delete(p.tunnels.sets, k)
	}
}

// appToken returns the kernel's app token ("" when it has none), learned
// from the first tunnel the set opened; it opens one if none was.
func (ts *tunnelSet) appToken(ctx context.Context) (string, error) {
	ts.mu.Lock()
	token, learned := ts.token, ts.learned
	ts.mu.Unlock()
	if learned {
		return token, nil
	}
	// One learns it; the requests that came meanwhile wait for it.
	ts.learning.Lock()
	defer ts.learning.Unlock()
	ts.mu.Lock()
	token, learned = ts.token, ts.learned
	ts.mu.Unlock()
	if learned {
		return token, nil
	}
	conn, err := ts.dial(ctx, "", "")
	if err != nil {
		return "", err
	}
	// The transport cannot take a connection it did not dial; the next
	// request opens its own.
	_ = conn.Close()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.token, nil
}

// dial opens a tunnel to the set's app: a signed upgrade request to the
// agent, answered 101, after which the connection is the app's.
func (ts *tunnelSet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	k := ts.key
	u, err := url.Parse(k.base + protocol.TunnelPath(k.kernel, k.port))
	if err != nil {
		return nil, fmt.Errorf("appproxy: agent %s address %q: %w", k.agentID, k.base, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if err := ts.p.cfg.Sign(req, k.agentID); err != nil {
		return nil, fmt.Errorf("appproxy: sign: %w", err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", protocol.TunnelUpgrade)
	req.Header.Set(protocol.AppTokenHeader, protocol.AppTokenWanted)

	conn, err := ts.p.dialAgent(ctx, u)
	if err != nil {
		return nil, err
	}
	// The upgrade is bounded: an agent that takes the connection and
	// never answers does not hold a request (or the transport) forever.
	_ = conn.SetDeadline(time.Now().Add(tunnelHandshake))
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	br := bufio.NewReader(conn)
	res, err := func() (*http.Response, error) {
		if err := req.Write(conn); err != nil {
			return nil, err
		}
		return http.ReadResponse(br, req)
	}()
	if err != nil {
		_ = conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("appproxy: tunnel to agent %s: %w", k.agentID, err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols || !httpapi.HeaderHasToken(res.Header, "Upgrade", protocol.TunnelUpgrade) {
		defer conn.Close()
		return nil, refusedTunnel(k.agentID, res)
	}
	if !stop() { // the context ended while the agent answered
		_ = conn.Close()
		return nil, ctx.Err()
	}
	_ = conn.SetDeadline(time.Time{})
	ts.mu.Lock()
	ts.token, ts.learned = res.Header.Get(protocol.AppTokenHeader), true
	ts.mu.Unlock()
	return &tunnelConn{Conn: conn, r: br}, nil
}

// dialAgent connects to the agent's endpoint at u's host, over TLS when
// u is https (with the proxy transport's TLS settings).
func (p *Proxy) dialAgent(ctx context.Context, u *url.URL) (net.Conn, error) {
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	host := net.JoinHostPort(u.Hostname(), port)
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if u.Scheme != "https" {
		return d.DialContext(ctx, "tcp", host)
	}
	var cfg *tls.Config
	if t, ok := p.cfg.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		cfg = t.TLSClientConfig.Clone()
	} else {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"} // an upgrade is HTTP/1.1's
	return (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", host)
}

// tunnelConn is a tunnel: reads start with what the agent sent after its
// 101, already buffered.
type tunnelConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *tunnelConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// tunnelError is an agent's refusal of a tunnel, with its status and
// what it said.
type tunnelError struct {
	agentID string
	status  int
	detail  string
}

func (e *tunnelError) Error() string {
	return fmt.Sprintf("agent %s refused the tunnel: %d %s", e.agentID, e.status, e.detail)
}

// refusedTunnel reads an agent's refusal (a problem) into a tunnelError.
func refusedTunnel(agentID string, res *http.Response) error {
	var p httpapi.Problem
	_ = json.NewDecoder(io.LimitReader(res.Body, 16<<10)).Decode(&p)
	detail := p.Detail
	if detail == "" {
		detail = http.StatusText(res.StatusCode)
	}
	return &tunnelError{agentID: agentID, status: res.StatusCode, detail: detail}
}

// asTunnelError finds a tunnel refusal in err.
func asTunnelError(err error) (*tunnelError, bool) {
	var te *tunnelError
	ok := errors.As(err, &te)
	return te, ok
}
