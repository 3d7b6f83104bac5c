// Package proxyserver runs Cairn's app proxy (package appproxy) as a
// process of its own: `cairn proxy`. It keeps no state that matters: it
// finds every route in the shared read models of a running Cairn, which it
// opens read-only on PostgreSQL (it runs no projector and writes no row of
// them), learns where agents serve from the agents' agent.register reports
// on the bus (its own durable consumer of the reports topic), checks
// grants with the key the API seals tickets with, and signs its requests
// to agents with a key of its own that the Cairn account key granted
// (busauth.IssueAppProxyKey): agents accept it for their apps and
// terminals only, and the proxy never holds the account key, which
// issues bus credentials. Its audit records (an app opened,
// a WebSocket closed, app traffic, which keeps a session in use from
// idling out) are appended to the event store like the API's.
//
// It listens on loopback unless given a TLS certificate or told
// explicitly that a TLS terminator stands in front: every request it
// answers other than its health check needs a grant (a one-use ticket
// or the app cookie), so a listener beyond loopback is an authenticated
// one. Its metrics are served on a listener of their own.
package proxyserver
