// Package projections is Cairn's read side: the runtime that keeps SQL read
// models up to date from the event store's global log, and rebuilds them.
//
// # Model
//
// A Projection names itself, lists the event types it handles, brings the
// migrations of its tables per Dialect, and folds one event at a time into
// its tables inside a transaction (Apply). Apply is deterministic: time and
// ids come from the events, never from the clock, so a rebuild from position
// 0 produces exactly the rows the live projector produced.
//
// A Projector follows the store (eventstore Subscribe) from the
// projection's checkpoint and applies what arrives in batches (up to
// Options.BatchSize events, or whatever is buffered when the log goes idle).
// One batch is ONE database transaction that also moves the checkpoint, so a
// crash replays at most the batch that did not commit (exactly-once effect).
// The transaction never waits for events: a batch is collected first, then
// applied and committed, which keeps write transactions short (SQLite has one
// writer at a time; on PostgreSQL an open transaction holds back the event
// store's read horizon).
//
// # Checkpoints and concurrent projectors
//
// Checkpoints live in the table projection_checkpoints (name, position,
// schema_version) next to the read models. Every batch transaction first
// reads (on PostgreSQL: locks, FOR UPDATE) its checkpoint row and applies
// only the events after it, then stores the new position. So several
// projectors of one projection — one per server replica, or a rebuild
// running beside a live projector — never apply an event twice: they
// serialise on the row, and a projector that finds the checkpoint moved
// ahead skips what another one applied. A checkpoint that moved back (a
// rebuild reset it) makes the projector resubscribe from there.
//
// Batches made only of events the projection does not handle are not
// written: the in-memory position moves (WaitFor sees it), and the
// checkpoint catches up with the next real batch, after
// Options.CheckpointEvery such events, or at shutdown.
//
// # Events
//
// Event types the projection does not list are skipped without decoding.
// Listed types are decoded with domain.DecodeEvent before the transaction
// starts; a payload that does not decode stops the projector with an
// *EventError (Phase "decode"): dropping it silently would corrupt the read
// model. An Apply that keeps failing after Options.MaxAttempts stops it too
// (Phase "apply"); transient database errors pass with the retries. A
// database that takes no writes because its disk is full (a KindUnavailable
// error, eventstore.ErrStorageFull) does not count against MaxAttempts: the
// projector pauses (Projector.Paused, the cairn_projection_paused gauge),
// keeps serving what it applied, and tries again with back-off until the
// batch commits, so freeing space resumes it without a restart.
//
// # Writes and the event store's writers
//
// Apply writes with Tx.Queue where it does not need a statement's result:
// on PostgreSQL the queued statements of a whole batch go to the server as
// one pipeline (a replay measured here went from about 2,900 to 9,400
// events per second), on SQLite they run at once. On SQLite the projector
// shares the file's single write lock with the event store's writer; its
// transactions are short (a batch of 500 events holds the lock for tens of
// milliseconds), and the two take the lock in turns, in the order they
// asked for it (sqlite.Store.LockWrites), instead of meeting in SQLite's
// busy back-off, so a projector catching up never starves the appends.
//
// A projection may also hold rows back across the events of a batch and
// write many per statement (Flusher: the projector calls Flush after the
// batch's last Apply, before the checkpoint). The sessions read model does so
// for a scheduling round's placements, 64 rows per UPDATE.
//
// # Dialects
//
// Two databases are supported, the same ones as the event store, and the
// read models live in the event store's database: SQLite (database/sql over
// modernc.org/sqlite, a write connection of its own on the store's file, opened
// by infra/readmodels.OpenSQLite) and PostgreSQL (the store's pgx pool and
// schema, infra/readmodels.NewPostgres, a Backend of its own). This package
// holds no driver: it works on database/sql and the Backend port. SQL is
// written once with $N placeholders, which both accept, and "{schema}."
// before every table name, which DB.SQL replaces with the PostgreSQL
// schema or removes on SQLite. What really differs is declared
// per Dialect: the DDL of the migrations, and how a timestamp is stored
// (Dialect.Time, scanned back with NullTime).
//
// # Read-your-writes
//
// Commands return the position of their last event. Projector.WaitFor
// blocks until the projection has reached such a position (or the context
// ends, with a domain KindUnavailable error), so a query can promise a
// state at least as recent as the caller's own write.
//
// # Rebuild
//
// Projector.Rebuild drops the projection's tables, recreates them from its
// migrations, resets the checkpoint to 0 and replays the log up to the last
// event committed when it started, reporting progress. It commits batch by batch, so the
// store's writers are never locked out for long; readers see a partial read
// model until it finishes. To rebuild without that, rebuild into a shadow
// database (a DB of its own whose WithLog names the live one, where the
// events are) and Replace the live tables and checkpoint with the copy in
// one transaction (infra/maintenance does so online).
//
// # Wiring
//
//	db, err := readmodels.OpenSQLite(sqliteStore, sqliteOpts) // infra/readmodels; or readmodels.NewPostgres(pgStore.Pool(), pgStore.Schema())
//	rm := sessions.New(db)
//	err = projections.Setup(ctx, db, rm) // before serving queries
//	p, err := projections.NewProjector(db, store, rm, projections.Options{Metrics: metrics})
//	go p.Run(ctx)
//	// A query handler given a minimum position:
//	err = p.WaitFor(reqCtx, minPosition) // KindUnavailable when it times out
//	s, err := rm.GetSession(reqCtx, id)
package projections
