// Package readapi is Cairn's HTTP API under /v1 (fiber): the routes that
// carry out commands (request and terminate sessions) and the queries over
// the read models (sessions, agents) and kernel logs. Mount registers them
// on an app built by infra/httpapi.New, which brings the problem+json
// errors, the body limit (413), request ids and metrics.
//
// # Files
//
// One file per route group: sessions_create.go (POST /v1/sessions),
// sessions_list.go (GET /v1/sessions), sessions_get.go (GET
// /v1/sessions/{id}), sessions_delete.go (DELETE /v1/sessions/{id}),
// sessions_logs.go (GET /v1/sessions/{id}/logs), agents_list.go (GET
// /v1/agents). The wire shapes of sessions are in sessions_view.go; they are
// this package's own types, mapped from the read models, so the HTTP
// contract (docs/api/openapi.yaml, kept in sync with the routes by a test)
// changes only when this package says so.
//
// # Reading your own writes
//
// Every mutating answer carries the global position of the events it
// appended ("position"). Every GET, and DELETE, accepts
// wait_for_position=<n>: the request first waits until the read models
// reflect position n, at most Deps.MaxWait (10s by default). When they do
// not get there in time the answer is 503 problem+json (kind
// "unavailable") with Retry-After: 1, never a possibly stale read: a
// client that asked for its own write either sees it or knows it did not.
//
// # Terminating
//
// DELETE /v1/sessions/{id} looks at the session in the read model first.
// A session that has already ended (TERMINATED, CANCELLED, ERROR) or is
// already terminating is answered 200 with its status and
// "already_finished" (true when it has ended), and no command runs, so no
// event is appended: repeating a DELETE is harmless. Otherwise the
// TerminateSession command runs (reason user-requested: a PENDING session
// is cancelled, a placed one goes TERMINATING) and the answer is 202 with
// the position of its events. A session that ended a moment before the
// read model saw it still gets 202: the command then appends nothing.
//
// # Who sees what
//
// Every route is behind Deps.Auth. Callers whose role is superadmin, admin
// or monitor see every session (there is one domain until tenancy lands;
// domain scoping for admins needs a domain filter in the sessions read
// model); any other caller sees only the sessions it owns. A session the
// caller may not see answers 404 exactly like one that does not exist, and
// so does a malformed session id. Monitors are read-only: POST and DELETE
// answer 403.
package readapi
