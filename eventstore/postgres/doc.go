// Package postgres is Cairn's production event store: the eventstore.Store
// port on PostgreSQL (15 or later) through pgx/v5.
//
// # Global order without a global lock
//
// Many writers commit concurrently, and a reader of $all must never skip an
// event: handing out positions from a sequence does not work, because a
// transaction can take position 10, commit after the one that took 11, and a
// reader that already saw 11 resumes after it and never sees 10. Serialising
// all appends behind one lock would fix the order but throws away group
// commit (measured here: about five times fewer appends per second). This
// package instead derives the order from PostgreSQL's transaction ids and only
// shows readers the part of the log that can no longer change.
//
// Positions. An append is one PL/pgSQL call (append_events, created by the
// migrations), run as its own READ COMMITTED transaction. Its i-th event
// (0-based) gets
//
//	position = xid * 2^20 + i   (that is, (xid << 20) | i)
//
// where xid is the 64-bit id of the appending transaction
// (pg_current_xact_id()). eventstore.MaxEventsPerAppend is 65536 < 2^20, so
// positions are unique, sparse, and ordered by (xid, index). The xid is also
// stored in the tx_id column.
//
// The horizon. ReadAll returns only rows whose position is below
//
//	horizon = pg_snapshot_xmin(pg_current_snapshot()) * 2^20
//
// evaluated in the same statement as the scan. pg_current_snapshot() returns
// the statement's active snapshot, the very one the scan uses, so the horizon
// and the rows agree. The snapshot's xmin is the smallest xid still running
// when the snapshot was taken.
//
// Proof sketch that a reader never skips. Let a read with snapshot S return
// rows up to position p (below S's horizon H). Take any event e with
// position < H that the read did not return. Its transaction's xid is below
// xmin(S), so that transaction had finished when S was taken: if it
// committed, S sees e and the read returned it (or stopped at its limit
// before it, in which case e > p, and a later read after p returns it:
// horizons only grow, since every xid below xmin(S) has finished for good);
// if it aborted, e never exists. Any transaction that commits after S
// was either running at S (its xid >= xmin(S)) or got its xid later (xids
// only grow, so its xid >= xmin(S)): its events are at positions >= H, above
// everything the read returned. So resuming from p skips nothing, and later
// reads only add events after p, in position order.
//
// Per-stream order. Positions follow xids, not commit order. Two appends to
// the same stream must therefore get xids in the order they commit, or $all
// could show revision 6 before revision 5. append_events first takes
// pg_advisory_xact_lock(hashtextextended(stream, 0)), which does not assign
// an xid; only after it holds the lock does it read the stream's revision and
// assign its xid (with its INSERT). PostgreSQL makes a commit visible before
// it releases the committer's locks, so the next append to the stream reads
// the committed revision (a fresh READ COMMITTED snapshot per statement) and
// gets a larger xid than the previous holder. Appends to different streams
// never wait for each other. A row lock would not do: UPDATE assigns the xid
// before it waits for the row (heap_update), so a per-stream row updated as
// the lock could get its xid before the holder it waits for. Two
// preconditions make the order hold, and append_events refuses to run without
// them (status 5): the transaction has no xid yet when the function starts
// (it is not nested in a transaction that already wrote), and the isolation
// level is READ COMMITTED. The store's connections force READ COMMITTED.
//
// Liveness. A transaction that holds an xid anywhere in the PostgreSQL
// cluster (xids are cluster-wide) holds the horizon back until it ends: events
// committed after it started are delayed, never lost or reordered. Keep
// write transactions short; never hold one open while waiting for new events
// (a projector must commit its batch before it polls again); forgotten
// prepared transactions stall readers; idle_in_transaction_session_timeout is
// a good guard. Positions stay within int64 for 2^43 xids (about 28 years at
// 10,000 write transactions per second, cluster-wide); past that, appends and
// reads fail with "bigint out of range" instead of wrapping.
//
// # Appends
//
// Append validates with eventstore.Prepare, then makes one round trip. The
// hot path of append_events is the stream lock and one statement that reads
// the stream's head, checks the expected revision and inserts (with unnest
// for several events). An append the expectation refuses may be a retry of
// one that succeeded, so the function then looks the ids up
// (stored_ids_status): stored at consecutive revisions of this stream in the
// same order, it returns the original revision and position without writing;
// stored elsewhere or otherwise, a duplicate. Refusals are status rows, not
// exceptions. The one exception left is the unique violation of the event id,
// when an id is already stored and the expectation holds (a retry with Any, or
// a duplicate); Append then asks stored_ids_status and returns the original
// result or an *eventstore.DuplicateEventError. Driver errors are translated at
// the boundary by SQLSTATE, never by message text.
//
// A single event, the common case, goes through append_event_packed instead:
// the same logic with scalar parameters, returning one bigint[] {status,
// revision, position} rather than OUT parameters (whose composite result
// costs the server a tuple descriptor and a function scan per call). It has
// no room for the conflicting id of a duplicate, which Append then asks
// stored_ids_status for.
//
// AppendMany (append_many, migration 0004) is the same argument for several
// streams in one transaction: it takes every stream's advisory lock first, in
// the order of the lock keys (so two calls sharing streams never wait for each
// other in a cycle, and a hash collision between two streams is harmless),
// before the transaction has an xid; then it reads every head, checks every
// expectation (a refused part: the ids are looked up as above, a retry part
// keeps its original result), and inserts all parts' events with one xid,
// event i of the call at xid * 2^20 + i, so they are contiguous in $all and
// every stream's events follow its earlier ones. A refused part returns a
// status before anything is inserted, so nothing of the call is written. The
// locks are held to commit in PostgreSQL's shared lock table, which bounds a
// call to eventstore.MaxStreamsPerAppend streams.
//
// An Append whose context ends while its statement runs may or may not have
// committed (the usual network-database ambiguity); retrying it with the same
// event ids is safe and returns the original result.
//
// # Fences
//
// An append whose context carries an eventstore.Fence goes through the
// *_fenced variants of the three functions (migration 0006): in the same
// transaction, before the stream locks, they take the lease's advisory
// lock shared and read its epoch from the leases table, and return status
// 6 (an *eventstore.FencedError, nothing written) when it is not the
// fence's. A takeover (lease_acquire) increments the epoch under the same
// lock held exclusive, so it waits for the fenced appends in flight, and
// an append arriving meanwhile waits for it and then reads the new epoch.
// Advisory locks assign no xid, so the ordering preconditions above hold.
// The leases table and its functions (lease_acquire, lease_renew,
// lease_release) are used by infra/lease.
//
// # Wake-ups
//
// NOTIFY is never sent inside an append: PostgreSQL serialises the commits of
// all notifying transactions (PreCommit_Notify takes a cluster-wide lock),
// which would undo the concurrency above. Instead, appends through a Store
// wake its own subscriptions directly (eventstore.Notifier); a background
// goroutine sends one coalesced NOTIFY, at most every Options.NotifyInterval
// and only after this Store appended, in its own short transaction with
// synchronous_commit off (a lost hint costs nothing); and a dedicated LISTEN
// connection, opened at the first Subscribe, wakes local subscriptions when
// another process appended. Polling every Options.PollInterval remains the
// truth; the subscription engine re-polls with a short back-off after a
// wake-up that found nothing, because the horizon may hold rows back for a
// moment. For the same reason a short read is not the end of the log: a
// subscription notes the last position committed when Subscribe is called
// and says CaughtUp only once it has delivered it.
//
// # Schema
//
// Every object lives in Options.Schema and is referred to by qualified names.
// Migrations are embedded (migrations/NNNN_name.sql), applied at Open in one
// transaction under a pg_advisory_xact_lock (held only while migrating), and
// recorded with a checksum in schema_migrations. A schema migrated by a newer
// Cairn (an unknown migration) or an edited migration is refused.
package postgres
