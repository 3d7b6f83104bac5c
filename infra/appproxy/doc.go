// Package appproxy is Cairn's app proxy: it lets a session's owner reach
// the web apps running in the session's containers (Jupyter, a terminal,
// any service port the image declares or the session pre-opened), without
// app traffic ever passing through the API handlers or the scheduler.
//
// # Path
//
//	browser --HTTP/WebSocket--> app proxy ==tunnel==> agent's endpoint --> 127.0.0.1:<host port> --> container
//
// The proxy is stateless: `cairn dev` runs one on its own listener,
// `cairn proxy` (package proxyserver) runs it alone; a cluster runs as
// many as it likes. For every request it
//
//  1. checks the caller's grant: a one-use ticket in the query
//     (TicketParam) or the app cookie (CookieName) it set when a ticket
//     was used. Grants are sealed with an HMAC key shared with the API
//     (Keyring), which mints tickets only after its own authorization
//     (POST /v1/sessions/{id}/apps/{app}, audited like every API call).
//     A grant names one user, one session and one app: anything else,
//     including another user's valid grant for another session, is
//     answered 404, exactly like an app that does not exist;
//  2. asks the read models where the app runs now (Routes): the session
//     must be running and offer the app; an ended session's app answers
//     404 at once, whatever cookie the browser holds. CachedRoutes keeps
//     what the read models answered until their database begins its next
//     write (projections.DB.Version), which is as exact as a query per
//     request;
//  3. forwards the request, streamed unbuffered, WebSocket upgrades
//     included, to the agent that runs the kernel (Addresses: the URL the
//     agent announced). An app's request goes through a tunnel
//     (tunnel.go): a connection to the agent's endpoint turned, by one
//     upgrade signed as the manager signs its requests to agents (Signer),
//     into raw bytes to the port the agent published on its own loopback
//     (GET {agent}/kernels/{kernel}/ports/{container port}/tunnel). The
//     proxy keeps an http.Transport of such tunnels per agent, kernel and
//     port and speaks HTTP to the app through them, kept alive and reused:
//     one signature per connection, and the agent only copies bytes. The
//     tunnel's 101 answers the kernel's app token (asked for with
//     protocol.AppTokenHeader), which the proxy adds as "Authorization:
//     token ..." to requests without an Authorization, as the agent's own
//     app route does. The terminal's WebSocket is a signed request to
//     {agent}/kernels/{kernel}/terminals/{terminal}. No app port is
//     reachable from the network.
//
// An image's app sees its request at its full path (/v1/sessions/{id}/
// apps/{app}/...), with X-Forwarded-Prefix naming that prefix: such apps are
// started with it as their base path (Jupyter's base_url). A pre-opened port
// runs whatever the user started there, which knows nothing of the prefix:
// it gets its requests with the prefix removed, and the redirects it
// answers within its root get the prefix back. The user's Cairn cookies and
// Cairn-* headers are removed on the way in, and an app cannot set cookies
// named cairn_*.
//
// # Audit and idle
//
// Using a ticket records "app.open <app>", the end of a WebSocket
// "app.close <app>", and traffic "app.traffic <app>" at most every
// Config.ActivityEvery per session and app, each about the session, in the
// audit trail. Traffic records are what the session-limits manager counts
// as use, so a session whose notebook or terminal is in use does not idle
// out.
//
// # One origin for every app, or a host per app
//
// Every app served under paths of one proxy host shares that origin: a
// page of one app can script another app the same browser opened. Users
// who do not trust each other's apps should reach the proxy on a host of
// its own, never the API's, or use the subdomain mode (Config.Domain,
// host.go): each app of each session at the root of a host of its own,
// with a host-only cookie.
//
// # Restart
//
// A proxy keeps nothing but the nonces of used tickets (so a ticket opens
// one request), when it last recorded traffic, idle tunnels and the
// routes CachedRoutes holds until the read models' next write. A restarted proxy
// answers the same URLs at once: the cookie is sealed, the route is read
// anew. Closing a session never waits on a proxy.
package appproxy
