// Package projectiontest runs the read-model tests against every backend:
// a real event store and a projections.DB on a fresh SQLite file (in
// t.TempDir) and on a fresh PostgreSQL schema (infra/pgtest), plus the
// fixtures and helpers those tests share: command handlers over the store,
// a projector running in the background, and table dumps for comparing a
// rebuild with the live rows.
package projectiontest
