package appproxy

import (
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
)

// DefaultTicketTTL is how long a ticket may wait before it is used.
const DefaultTicketTTL = time.Minute

// TicketParam is the query parameter that carries a ticket to the proxy.
const TicketParam = "cairn_ticket"

// Opener mints the tickets the API hands to a caller it has authorized
// to open an app (POST /v1/sessions/{id}/apps/{app}).
type Opener struct {
	Keys *Keyring
	// PublicURL is the proxy's base URL as browsers reach it, such as
	// http://127.0.0.1:8081 or https://apps.example.com.
	PublicURL *url.URL
	// Domain, when set, opens every app whose name can be a DNS label on
	// a host of its own, <HostLabel>.<Domain>, with PublicURL's scheme and
	// port (the subdomain mode; the terminal stays on PublicURL).
	Domain string
	// TicketTTL is a ticket's lifetime (default DefaultTicketTTL).
	TicketTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Opened is a minted ticket and where to use it.
type Opened struct {
	// URL opens the app in a browser (the terminal: its page). It carries
	// a ticket, which one request consumes.
	URL string `json:"url"`
	// WebSocketURL, for the terminal only, opens its WebSocket directly
	// (for scripts; the client adds terminal, cols and rows), with a
	// ticket of its own.
	WebSocketURL string    `json:"websocket_url,omitempty"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// Open mints a ticket for user to reach app (TerminalApp: the terminal)
// of session.
func (o Opener) Open(user, session uuid.UUID, app string) (Opened, error) {
	if o.Keys == nil || o.PublicURL == nil {
		return Opened{}, fmt.Errorf("appproxy: opener without keys or public URL")
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	ttl := o.TicketTTL
	if ttl <= 0 {
		ttl = DefaultTicketTTL
	}
	exp := now().Add(ttl).Truncate(time.Second)
	link := func(path string) string {
		sealed := o.Keys.Seal(Grant{User: user, Session: session, App: app, Kind: KindTicket, Expires: exp.Unix()})
		u := *o.PublicURL
		u.Path = path
		u.RawQuery = url.Values{TicketParam: {sealed}}.Encode()
		return u.String()
	}
	out := Opened{URL: link(AppPath(session, app)), ExpiresAt: exp}
	if label, ok := HostLabel(session, app); ok && o.Domain != "" {
		sealed := o.Keys.Seal(Grant{User: user, Session: session, App: app, Kind: KindTicket, Expires: exp.Unix()})
		u := url.URL{Scheme: o.PublicURL.Scheme, Host: label + "." + o.Domain, Path: "/",
			RawQuery: url.Values{TicketParam: {sealed}}.Encode()}
		if port := o.PublicURL.Port(); port != "" {
			u.Host += ":" + port
		}
		out.URL = u.String()
	}
	if app == TerminalApp {
		ws, _ := url.Parse(link(TerminalPath(session)))
		ws.Scheme = map[string]string{"https": "wss"}[ws.Scheme]
		if ws.Scheme == "" {
			ws.Scheme = "ws"
		}
		out.WebSocketURL = ws.String()
	}
	return out, nil
}

// AppPath is the path prefix of a session's app on the proxy, ending in
// a slash: the app itself is served under it, unchanged (apps are started
// with it as their base path).
func AppPath(session uuid.UUID, app string) string {
	return "/v1/sessions/" + session.String() + "/apps/" + app + "/"
}

// TerminalPath is the path of a session's terminal WebSocket.
func TerminalPath(session uuid.UUID) string {
	return "/v1/sessions/" + session.String() + "/terminal"
}
