// Package sqlite is Cairn's embedded event store: the eventstore.Store port
// on one SQLite database file (modernc.org/sqlite, pure Go), in WAL mode and
// durable (synchronous=FULL) by default.
//
// # Writes: one writer, group commit
//
// One goroutine owns the only write connection. Append validates its events
// (eventstore.Prepare) in the caller's goroutine, then queues a request. The
// writer takes whatever is queued (up to Options.MaxBatch requests) and
// applies it in ONE transaction, so one fsync covers many appends. Inside the
// transaction each append is checked on its own (the expected revision,
// and the idempotent retry of an append already stored, recognised when
// that revision fails or its first id collides on insert), against the committed state plus the effects
// of the appends before it in the same batch, because they run on the same
// connection inside the same transaction. An append that is refused
// (wrong expected revision, duplicate id) writes nothing and gets its own
// error; the others still commit. A multi-event append runs inside a
// SAVEPOINT so a refusal discovered half-way (an id already stored in another
// stream) is undone without touching the rest of the batch.
//
// AppendMany is one request whose parts (one per stream) run inside one more
// SAVEPOINT: each part is checked and written as an Append would be, and the
// first refused part rolls the savepoint back, so the request writes all of
// its parts or none, and its events get consecutive positions. Statement and
// savepoint journals are kept in memory (temp_store), not written page by
// page to a temporary file.
//
// Positions are the table's INTEGER PRIMARY KEY: dense, starting at 1,
// assigned by the single writer in commit order, so a reader that resumes
// from the last position it saw never skips an event (positions become
// visible in order, a whole transaction at a time).
//
// If the batch transaction fails for a reason that is not a refusal (an I/O
// error, a full disk), it is rolled back and, when it held more than one
// append, every append is retried alone in its own transaction, so one
// poisoned append cannot fail its neighbours. A failed COMMIT fails every
// append of the batch, and readers never see any of it. (The ambiguity of
// every database remains: if the fsync of the WAL fails and the process dies
// before the next commit, recovery may still find that batch complete.)
//
// Events of one transaction share their recorded_at (the batch's commit
// time, in microseconds).
//
// # Cancellation
//
// An Append whose context ends before the writer has taken its request
// returns the context's error and is never written. Once the writer has taken
// the request, Append waits for the real outcome, whatever its context says
// (at most one batch), so it never reports a failure for events that were
// committed. A request whose context is already done when the writer takes
// it is not written and reports the context's error.
//
// # Reads
//
// ReadStream and ReadAll run on a separate pool of read-only connections
// (Options.ReadConns); WAL lets them run while the writer commits. ReadAll
// with limit <= 0 returns DefaultReadAllLimit events. Subscribe is the
// shared polling subscription (eventstore.NewPollingSubscription), woken by
// the writer after every commit that wrote something.
//
// # Measuring
//
// Store.Path (the absolute database path), Store.DB (the read-only pool)
// and OpenRaw (a writable handle with the store's write settings) let a
// benchmark measure a raw baseline on the same database.
//
// # Close
//
// Close refuses new appends, lets the writer apply the appends already
// queued, ends subscriptions with eventstore.ErrClosed and closes the
// database. Every call after Close returns eventstore.ErrClosed.
//
// # A full disk
//
// SQLITE_FULL becomes eventstore.StorageFull (KindUnavailable,
// eventstore.ErrStorageFull), recognised by its result code; Store.Full
// tells whether the last append transaction failed so. Reads keep working.
// The store's connections use SQLite's persistent WAL: Close leaves
// path-wal and path-shm in place, so a start on a full disk (which could
// not create path-shm, without which WAL mode does not open) opens the
// database and serves reads.
//
// # Files
//
// Open creates the database file and its directory. Besides path, SQLite
// keeps path-wal and path-shm next to it (also after Close); copy the three
// together, or use SQLite's backup API. Two Stores (or processes) on one file stay correct
// (every check runs inside the write transaction), but their writers
// contend for the lock instead of grouping, and a Store's readers see the
// other's appends up to 250ms late (its ReadAll answers reads at the head
// from the events it committed itself for that long): open one Store per
// file.
//
// # Fences
//
// An eventstore.Fence in an append's context is ignored: a SQLite store
// is shared only by processes on one machine, whose leaders hold a flock
// (infra/lease.File) that the kernel releases when the holder dies, and a
// process paused with its flock still holds it, so no other process takes
// over meanwhile and no late write needs refusing.
//
// # Schema
//
// The schema is created at Open from the embedded, numbered migrations in
// migrations/; schema_migrations records which ones ran. A database written
// by a newer Cairn (an unknown migration) is refused.
package sqlite
