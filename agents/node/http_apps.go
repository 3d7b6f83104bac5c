package node

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// cairnHeaderPrefix marks the headers of Cairn's own (the manager's
// signature among them): none is forwarded to an app.
const cairnHeaderPrefix = "Cairn-"

// cairnCookiePrefix marks the cookies of Cairn's own (the Web-UI's
// session): an app never gets them, and may not set them.
const cairnCookiePrefix = "cairn_"

// newAppTransport is the transport of forwarded requests: to loopback
// only, no proxy from the environment, bodies passed as they are (no
// compression negotiated on the app's behalf).
func newAppTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// publishedPort finds the kernel and container port a request's path
// names ({id}, {port}) among the ports this agent published: 400 naming a
// malformed one, 404 for a kernel or port it does not serve.
func (a *Agent) publishedPort(r *http.Request, op string) (uuid.UUID, int, int, kernelApps, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return id, 0, 0, kernelApps{}, domain.Invalid(op, "id", "%q is not a kernel id", r.PathValue("id"))
	}
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || port < 1 || port > 65535 {
		return id, 0, 0, kernelApps{}, domain.Invalid(op, "port", "%q is not a port number", r.PathValue("port"))
	}
	apps, ok := a.appsOf(id)
	if !ok {
		return id, port, 0, kernelApps{}, domain.Errorf(op, domain.KindNotFound, "kernel %s does not run on this agent", id)
	}
	hostPort, ok := apps.hostPort(port)
	if !ok {
		return id, port, 0, apps, domain.Errorf(op, domain.KindNotFound, "kernel %s publishes no port %d", id, port)
	}
	return id, port, hostPort, apps, nil
}

// serveApp answers /kernels/{id}/apps/{port}/{rest...}: it forwards the
// request to the host port the kernel's container port is published on,
// as http://127.0.0.1:<host port>/<rest>?<query> (see Handler).
func (a *Agent) serveApp(w http.ResponseWriter, r *http.Request) {
	id, port, hostPort, apps, err := a.publishedPort(r, "agent.app")
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	a.appProxy(id, port, hostPort, apps.token).ServeHTTP(w, r)
}

// appProxy forwards to one published port: streamed (every write flushed
// at once), WebSocket and other upgrades passed through, hop-by-hop
// headers dropped (httputil.ReverseProxy does both).
func (a *Agent) appProxy(kernel uuid.UUID, containerPort, hostPort int, token string) *httputil.ReverseProxy {
	target := net.JoinHostPort(appHost, strconv.Itoa(hostPort))
	return &httputil.ReverseProxy{
		Transport:     a.apps,
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			rewriteAppRequest(pr, target, token)
		},
		ModifyResponse: func(res *http.Response) error {
			dropCairnSetCookies(res.Header)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			a.log.Info("app did not answer", "kernel_id", kernel, "port", containerPort, "error", err)
			writeBadGateway(w, r, "the app on port "+strconv.Itoa(containerPort)+" of kernel "+kernel.String()+
				" did not answer: it is not listening yet (still starting) or has stopped")
		},
	}
}

// rewriteAppRequest makes the outgoing request of a forwarded one: the
// path after /kernels/{id}/apps/{port} (as sent, escapes kept) and the query
// on the app's address; without Cairn's headers and cookies; with the app
// token when the request brings no Authorization of its own; and with the
// X-Forwarded-* headers the app proxy sent (the agent's view only where
// it sent none). ReverseProxy drops the hop-by-hop headers itself.
func rewriteAppRequest(pr *httputil.ProxyRequest, target, token string) {
	in, out := pr.In, pr.Out
	// "", kernels, id, apps, port, rest: the rest as it was sent.
	rest := "/"
	if parts := strings.SplitN(in.URL.EscapedPath(), "/", 6); len(parts) == 6 {
		rest += parts[5]
	}
	out.URL.Scheme, out.URL.Host, out.Host = "http", target, ""
	if p, err := url.PathUnescape(rest); err == nil {
		out.URL.Path, out.URL.RawPath = p, rest
	} else {
		out.URL.Path, out.URL.RawPath = rest, ""
	}
	out.URL.RawQuery = in.URL.RawQuery

	for name := range out.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), cairnHeaderPrefix) {
			out.Header.Del(name)
		}
	}
	out.Header.Del(busauth.ManagerSignatureHeader)
	dropCairnCookies(out.Header)
	if out.Header.Get("Authorization") == "" && token != "" {
		out.Header.Set("Authorization", "token "+token)
	}

	// ReverseProxy removed the incoming X-Forwarded-* headers from out:
	// the client's address goes first in the chain, then the proxy's.
	if prior := in.Header.Values("X-Forwarded-For"); len(prior) > 0 {
		out.Header["X-Forwarded-For"] = prior
	}
	pr.SetXForwarded()
	for _, h := range []string{"X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Prefix"} {
		if v := in.Header.Get(h); v != "" {
			out.Header.Set(h, v)
		}
	}
}

// dropCairnCookies removes the cookies named cairn_* from a request.
func dropCairnCookies(h http.Header) {
	lines := h.Values("Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ";") {
			part = strings.TrimSpace(part)
			name, _, _ := strings.Cut(part, "=")
			if part == "" || strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), cairnCookiePrefix) {
				continue
			}
			kept = append(kept, part)
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// dropCairnSetCookies removes an app's attempts to set a cairn_* cookie.
func dropCairnSetCookies(h http.Header) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		name, _, _ := strings.Cut(line, "=")
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), cairnCookiePrefix) {
			kept = append(kept, line)
		}
	}
	h["Set-Cookie"] = kept
	if len(kept) == 0 {
		h.Del("Set-Cookie")
	}
}

// writeBadGateway answers 502 as a problem: the app behind a published
// port did not answer.
func writeBadGateway(w http.ResponseWriter, r *http.Request, detail string) {
	writeProblemStatus(w, r, http.StatusBadGateway, domain.KindUnavailable, detail)
}
