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
// /v1/agents), agents_enrollment.go (an agent's one-time enrollment
// token, its enrollment with it, its revocation; bus credentials are
// signed through the BusSigner port), agents_mark_lost.go (POST
// /v1/agents/{id}/lost). The wire shapes of sessions are in
// sessions_view.go; they are this package's own types, mapped from the
// read models, so the HTTP contract (docs/api/openapi.yaml, kept in sync
// with the routes by a test) changes only when this package says so.
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
// Every route but POST /v1/auth/login and POST /v1/agent-enrollments is
// behind Deps.Auth (infra/auth/httpauth: Backend.AI-signed requests and
// bearer tokens),
// which resolves the caller into a full principal: user, role, domain,
// access key and projects. Sessions: superadmins see every session, admins
// and monitors their domain's, users their own; a session the caller may
// not see answers 404 exactly like one that does not exist (and so does a
// malformed id), and is recorded as denied in the audit trail. Monitors
// are read-only: POST and DELETE answer 403. A session request is checked
// against the tenancy read model: the project (users must belong to it),
// the resource group (allowed for the domain, project or keypair; the
// first allowed one when none is named) and the image registry.
//
// # Tenancy
//
// The administration routes (tenancy.go lists them; one file per route,
// or per query pair for reads: domains_*.go, projects_*.go, users_*.go,
// keypairs_*.go, keypair_policies_*.go, storage_policies_*.go,
// resource_groups_*.go, images_*.go, auth_*.go) run the tenancy commands,
// which authorize the actor (the decision table in commands/tenancy.go),
// and query the tenancy read model. Before a command runs on an object of
// another domain, the handler looks the object's domain up and answers
// the 404 of a missing object, recorded as denied (scope.go); inside the
// caller's domain the command decides (403 for a role that may not act).
// Secrets are shown once: a keypair's secret key at issue and rotation, a
// token when it is issued.
package readapi
