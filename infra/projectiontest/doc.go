// Package projectiontest runs the read-model tests against every backend
// (it lives in infra because it opens the event store backends and runs the
// command handlers, which the projections layer may not import):
// a real event store and a projections.DB on a fresh SQLite file (in
// t.TempDir) and on a fresh PostgreSQL schema (infra/pgtest), plus the
// fixtures and helpers those tests share: command handlers over the store,
// a projector running in the background, and table dumps for comparing a
// rebuild with the live rows.
package projectiontest
