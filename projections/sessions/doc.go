// Package sessions is the read model of sessions and their kernels: what
// the HTTP layer lists and shows (GetSession, ListSessions), kept up to date
// by a projections.Projector from the events of the session streams
// (session.* and kernel.*).
//
// Tables (see schema.go): sessions, one row per session, with the request
// (owner, domain, project, resource group, type, image, command, requested
// slots), the lifecycle (status, reason, message, pending reasons, times,
// result, exit code), where it runs (agent ids, device assignment) and the
// positions of its first and last events; kernels, one row per kernel, with
// its role, agent, container, status, exit code, requested slots and
// devices. Pending (queue.go) reads the scheduler's queue in one query:
// every PENDING session with what placement checks besides its slots
// (starts_at, architecture, dependencies). The session's environment is not projected: it may hold secrets
// and has no place in a listing.
//
// Every row records the position of the last event applied to it, and
// every update is guarded by it, so applying an event again changes
// nothing. Slots and devices are stored as JSON (TEXT on SQLite, jsonb on
// PostgreSQL), amounts as decimal strings.
//
// session.scheduled, thousands of which a scheduling round appends at once,
// is written many rows per statement (scheduled.go): its rows are held for
// the batch and written at its end (projections.Flusher), or before any
// other event of the batch, so the order of writes to a row never changes.
package sessions
