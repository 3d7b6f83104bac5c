// Package commandapi is the write side's HTTP port: the /v1 routes that
// carry out commands (request and terminate sessions, enroll agents, log
// in, administer the tenancy, manage virtual folders and their files). The
// queries are readapi's; the handlers here read through readapi's lookups
// (readapi.CallerOf, the scope lookups, WaitForPosition) before a command
// runs, so a caller's view of an object is the same on both sides.
//
// New checks the dependencies; API.MountPublic registers the two routes
// that come before authentication (POST /v1/auth/login, POST
// /v1/agent-enrollments), API.Mount the others on the authenticated /v1
// group, on which readapi's routes are mounted too (infra/devserver wires
// both). The package's tests run against both sides mounted that way,
// including the authorization matrix and the test that
// docs/api/openapi.yaml lists every route.
//
// # Files
//
// One file per route: sessions_create.go (POST /v1/sessions),
// sessions_delete.go (DELETE /v1/sessions/{id}), agents_enrollment.go (an
// agent's one-time enrollment token, its enrollment with it, its
// revocation; bus credentials are signed through the BusSigner port),
// agents_mark_lost.go (POST /v1/agents/{id}/lost), the tenancy commands
// (domains_*.go, projects_*.go, users_*.go, keypairs_*.go,
// keypair_policies_*.go, storage_policies_*.go, resource_groups_*.go,
// images_*.go, auth_*.go), the run-time settings (settings_change.go,
// PATCH /v1/settings), the virtual folder commands and file
// routes (vfolders_*.go), and the superadmins' maintenance jobs over the
// Maintenance port (maintenance.go): maintenance_rebuilds_create.go (POST
// /v1/maintenance/rebuilds, an online rebuild of a read model) and
// audit_verify.go (POST /v1/audit/verify); they run no command. File operations are not events: each asks
// commands.AuthorizeVFolderFiles first, then calls the storage port, so
// reads of files (GET .../files, .../files/content) are here too.
// Resumable uploads (the tus protocol on /v1/vfolders/{id}/uploads,
// vfolders_uploads_*.go) are file writes of the same kind.
//
// Every answer of a command carries the global position of the events it
// appended ("position"); wait_for_position on a later GET (readapi) reads
// it back, and on a command makes the objects it names visible to the
// checks made on the read model first.
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
// # Who may act
//
// Monitors are read-only: commands answer 403. A session request is
// checked against the tenancy read model: the project (users must belong
// to it), the resource group (allowed for the domain, project or keypair;
// the first allowed one when none is named) and the image registry. The
// tenancy commands authorize the actor (the decision table in
// commands/tenancy.go). Before a command runs on an object of another
// domain, the handler looks the object's domain up and answers the 404 of
// a missing object, recorded as denied; inside the caller's domain the
// command decides (403 for a role that may not act). Secrets are shown
// once: a keypair's secret key at issue and rotation, a token when it is
// issued.
package commandapi
