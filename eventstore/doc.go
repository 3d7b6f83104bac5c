// Package eventstore defines Cairn's event store: the envelope every state
// change is recorded in, the Store port that every backend implements, the
// typed errors clients branch on, and the polling subscription engine the
// backends share.
//
// Contract (see docs/architecture.md for the invariants):
//
//   - Append is all-or-nothing for the events of one call, checks the
//     expected revision of the stream, and returns the revision and global
//     position of the last event written. Re-appending events whose ids are
//     already stored in that stream is a no-op that returns the original
//     result (idempotent retry).
//   - AppendMany makes several appends (to distinct streams, at most
//     MaxStreamsPerAppend) as one: each part checked as Append checks it,
//     all of them written or none, their events contiguous in the global
//     log in the order of the parts.
//   - An append whose context carries a Fence (WithFence: a leader's lease
//     and epoch) is refused whole, with ErrFenced, by a store that checks
//     fences (PostgreSQL) once the lease's epoch moved on; SQLite ignores
//     fences (one machine: its leases are file locks).
//   - Revisions are 0-based and dense within a stream.
//   - Positions are global, strictly increasing in the order ReadAll and
//     Subscribe deliver events, and greater than zero. They are not
//     necessarily dense (the PostgreSQL backend derives them from the
//     transaction id). Position 0 means "before the first event".
//   - ReadAll(after) returns only events that can never be preceded by an
//     event committed later: a reader that resumes from the last position it
//     saw never skips an event.
//   - Subscribe catches up from a position, then follows live, delivering
//     every event exactly once in position order, and tells the consumer when
//     it has caught up.
//
// Backends live in sub-packages named after their mechanism (sqlite,
// postgres); storetest holds the conformance suite they all pass, and dsn
// opens a backend from a DSN.
package eventstore
