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
	// TicketTTL is a ticket's lifetime (default DefaultTicketTTL).
	TicketTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Opened is a minted ticket and where to use it.
type Opened struct {
	// URL opens the app: for an HTTP app the page to navigate to; for the
	// terminal the WebSocket URL (the client adds terminal, cols and
	// rows). It carries the ticket, which one request consumes.
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
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
	sealed := o.Keys.Seal(Grant{User: user, Session: session, App: app, Kind: KindTicket, Expires: exp.Unix()})
	u := *o.PublicURL
	if app == TerminalApp {
		u.Path = TerminalPath(session)
		switch u.Scheme {
		case "https":
			u.Scheme = "wss"
		default:
			u.Scheme = "ws"
		}
	} else {
		u.Path = AppPath(session, app)
	}
	u.RawQuery = url.Values{TicketParam: {sealed}}.Encode()
	return Opened{URL: u.String(), ExpiresAt: exp}, nil
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
