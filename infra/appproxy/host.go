package appproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// The subdomain mode: with Config.Domain (and Opener.Domain) set, each app
// of each session has a host of its own, <HostLabel>.<domain>, served at
// its root: a page of one app is another origin than every other app's, and
// an app that must own "/" (VS Code-like apps) gets "/". The label is not a
// secret and needs none: the host's app cookie (a grant for one user, one
// session, one app) is what lets a request in, and the cookie is
// host-scoped (no Domain attribute), so the browser never sends it to a
// sibling host.

// hostLabel is <app>--<session as 32 hex digits>: an app whose name is a
// DNS label of lower-case letters, digits and hyphens, the session without
// its dashes, within DNS's 63 bytes per label.
var hostLabel = regexp.MustCompile(`^([a-z0-9](?:[a-z0-9-]{0,27}[a-z0-9])?)--([0-9a-f]{32})$`)

// HostLabel is the DNS label of app of session in the subdomain mode, and
// false when the app's name cannot be one (it is then opened by path).
func HostLabel(session uuid.UUID, app string) (string, bool) {
	label := app + "--" + strings.ReplaceAll(session.String(), "-", "")
	if app == TerminalApp || !hostLabel.MatchString(label) {
		return "", false
	}
	return label, true
}

// parseHostLabel is the session and app a host label names.
func parseHostLabel(label string) (uuid.UUID, string, bool) {
	m := hostLabel.FindStringSubmatch(label)
	if m == nil {
		return uuid.Nil, "", false
	}
	session, err := uuid.Parse(m[2])
	if err != nil {
		return uuid.Nil, "", false
	}
	return session, m[1], true
}

// domainName is what CheckDomain accepts: lower-case DNS labels joined by
// dots, at least two of them.
var domainName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$`)

// CheckDomain refuses a domain that cannot hold the apps' hosts.
func CheckDomain(d string) error {
	if !domainName.MatchString(d) || len(d) > 253-64 {
		return fmt.Errorf("%q is not a lower-case DNS name of two labels or more (e.g. apps.example.com)", d)
	}
	return nil
}

// onHost tells whether host (a request's Host) is an app's host under
// domain, and which.
func onHost(host, domain string) (uuid.UUID, string, bool, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	label, ok := strings.CutSuffix(host, "."+domain)
	if !ok {
		return uuid.Nil, "", false, false
	}
	session, app, ok := parseHostLabel(label)
	return session, app, ok, true
}

// onHostKey marks, in a request's context, a request of the subdomain
// mode.
type onHostKey struct{}

// serveHost serves a request to an app's own host: the app at its root.
// An image's app (started with its path prefix as its base path) is sent
// its requests under that prefix, as in the path mode; a pre-opened port's
// gets the path as it is.
func (p *Proxy) serveHost(w http.ResponseWriter, r *http.Request, session uuid.UUID, app string) {
	g, fromTicket, ok := p.grant(w, r, session, app)
	if !ok {
		return
	}
	if fromTicket && !isUpgrade(r) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		p.exchangeTicket(w, r, g, "/")
		return
	}
	route, ok := p.route(w, r, g)
	if !ok {
		return
	}
	if route.Port <= 0 {
		p.problem(w, r, domain.NotFound("app.proxy", "app"))
		return
	}
	q := r.URL.Query()
	q.Del(TicketParam)
	path := r.URL.EscapedPath()
	if prefix := AppPath(session, app); !route.OwnsRoot && !strings.HasPrefix(path, prefix) {
		path = prefix + strings.TrimPrefix(path, "/")
	}
	p.forwardApp(w, r.WithContext(context.WithValue(r.Context(), onHostKey{}, true)), g, route, appTarget(route, path, q))
}

// exchangeTicket trades the ticket grant g came from for an app cookie
// scoped to cookiePath of the request's host (no Domain attribute: never
// sent to another host), and redirects to the same URL without the
// ticket, which drops it from the address bar, the app's logs and the
// history.
func (p *Proxy) exchangeTicket(w http.ResponseWriter, r *http.Request, g Grant, cookiePath string) {
	cookie := g
	cookie.Kind, cookie.Nonce = KindCookie, ""
	cookie.Expires = p.cfg.Now().Add(p.cfg.CookieTTL).Unix()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: p.cfg.Keys.Seal(cookie), Path: cookiePath,
		HttpOnly: true, Secure: p.cfg.CookieSecure, SameSite: http.SameSiteLaxMode, MaxAge: int(p.cfg.CookieTTL / time.Second)})
	u := *r.URL
	q := u.Query()
	q.Del(TicketParam)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
}

// refuseHost answers a request to a host under the domain that names no
// app: 404, as for an app that does not exist.
func (p *Proxy) refuseHost(w http.ResponseWriter, r *http.Request) {
	p.log.Info("app request refused", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr, "error", "not an app's host")
	p.metrics.refused.Inc()
	p.problem(w, r, domain.NotFound("app.proxy", "app"))
}
