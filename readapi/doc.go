// Package readapi is the query side of Cairn's HTTP API under /v1 (fiber):
// the GET routes over the read models (sessions, agents, the audit trail
// and its live stream, tenancy, virtual folders, usage statistics) and
// kernel logs. The
// command endpoints (POST, PUT, PATCH, DELETE) are the write side's HTTP
// port, infra/commandapi, which looks objects up through this package
// (CallerOf, the scope lookups, WaitForPosition) before a command runs.
// This package never imports the commands.
//
// New checks the dependencies; API.Mount registers the routes on the /v1
// group that the caller put behind authentication, on an app built by
// infra/httpapi.New, which brings the problem+json errors, request ids and
// metrics. infra/devserver mounts both sides on one app.
//
// # Files
//
// One file per route group: sessions_list.go (GET /v1/sessions),
// sessions_get.go (GET /v1/sessions/{id}), sessions_logs.go (GET
// /v1/sessions/{id}/logs), agents_list.go (GET /v1/agents), audit_list.go
// (GET /v1/audit and /v1/audit/stream, NDJSON or CSV), usage_get.go (GET
// /v1/usage: usage per day, as JSON or CSV), sessions_pending.go (GET
// /v1/sessions/{id}/pending) and scheduler_queue.go (GET
// /v1/scheduler/queue), which explain waiting sessions with a scheduling
// round over the read models (explain.go, explain_checks.go, capacity.go),
// sessions_timeline.go (GET /v1/sessions/{id}/timeline, the session's
// stream through the EventReader port), events_stream.go (GET /v1/events),
// and the superadmins' maintenance queries over the Maintenance port (maintenance.go):
// system_get.go (GET /v1/system), maintenance_rebuilds_list.go and
// maintenance_rebuilds_get.go (GET /v1/maintenance/rebuilds[/{id}]),
// audit_verify_list.go and audit_verify_get.go (GET
// /v1/audit/verify[/{id}]). The wire shapes of sessions are in
// sessions_view.go; they are this package's own types, mapped from the
// read models, so the HTTP contract (docs/api/openapi.yaml, kept in sync
// with the routes of both sides by a test in infra/commandapi) changes
// only when this package says so.
//
// # Reading your own writes
//
// Every mutating answer carries the global position of the events it
// appended ("position"). Every GET, and DELETE, accepts
// wait_for_position=<n>: the request first waits until the read models
// reflect position n, at most Deps.MaxWait (30s by default). When they do
// not get there in time the answer is 503 problem+json (kind
// "unavailable") with Retry-After: 1, never a possibly stale read: a
// client that asked for its own write either sees it or knows it did not.
// Without it, a GET of one object that finds nothing it would hide waits
// (at most Deps.RecheckWait, 2s) until the read models reach the log's
// head and looks again before answering 404 (recheck.go): a client's GET
// right after its own 201 sees the object.
//
// # Live changes
//
// GET /v1/events (events_stream.go) is a server-sent event stream of the
// changes the caller may see, resumable with Last-Event-ID (a log
// position). One change feed per API (changes.go, run by RunChanges)
// follows the log, waits for the read models, works out once per event
// which object changed and who may see it (changes_audience.go), and
// fans the change out to the open streams, dropping one that falls
// behind rather than waiting for it.
//
// # Who sees what
//
// Every route is behind the authentication middleware (infra/auth/httpauth:
// Backend.AI-signed requests and bearer tokens), which resolves the caller
// into a full principal: user, role, domain, access key and projects.
// Sessions: superadmins see every session, admins and monitors their
// domain's, users their own; a session the caller may not see answers 404
// exactly like one that does not exist (and so does a malformed id), and
// is recorded as denied in the audit trail. Usage follows the same rule:
// superadmins every domain's, admins and monitors their domain's, users
// their own; a domain or user filter the caller may not see is 404.
//
// # Tenancy
//
// The administration queries (tenancy.go lists them; one file per query
// pair: domains_read.go, projects_read.go, users_read.go, keypairs_read.go,
// keypair_policies_read.go, storage_policies_read.go,
// resource_groups_read.go, images_read.go, auth_*.go) read the tenancy read
// model. An object of another domain is hidden from all but superadmins,
// recorded as denied (scope.go); the command endpoints use the same
// lookups before they run a command.
//
// # Settings
//
// settings_read.go serves the run-time settings to superadmins (GET
// /v1/settings: every key with its value, default, seeding flag and last
// change; GET /v1/settings/history: the changes, newest first), and
// SettingsDeps.Value is how the running server reads a setting's current
// value from the read model.
package readapi
