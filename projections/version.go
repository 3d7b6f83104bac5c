package projections

import "sync/atomic"

// Version tells a reader that keeps query results in memory whether they
// can still be trusted: it changes when a write transaction of this
// process on the DB begins and again when it ends (a projector's batch, a
// reset, a Replace, a migration), and settled is false while one is under
// way. A result read after a settled Version v is the truth for as long as
// Version returns v again: no write has begun since, so none can have
// committed. Writers in other processes (another replica on the same
// PostgreSQL database, `cairn replay` against a live file) do not change
// it: only a process that writes its read models itself may cache this
// way.
func (db *DB) Version() (v uint64, settled bool) {
	// version before writing: a writer raises writing before it bumps the
	// version and lowers it after, so a version read after a begin always
	// comes with writing > 0, or it is already stale.
	v = db.writes.version.Load()
	return v, db.writes.writing.Load() == 0
}

// writeVersion is what Version reads: the number of write transactions
// begun plus ended, and of those under way.
type writeVersion struct {
	version atomic.Uint64
	writing atomic.Int64
}

// begin marks a write transaction under way until the returned function
// is called (after its commit or rollback).
func (w *writeVersion) begin() func() {
	w.writing.Add(1)
	w.version.Add(1)
	return func() {
		w.version.Add(1)
		w.writing.Add(-1)
	}
}
