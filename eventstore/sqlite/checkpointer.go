package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"time"
)

// The checkpointer's pace: it runs at most every checkpointInterval, after
// a commit; when the WAL holds more than resetFrames frames it checkpoints
// once more holding the write gate, so that the next write transaction
// starts the WAL over instead of growing it.
const (
	checkpointInterval = time.Second
	resetFrames        = 4096
)

// checkpointPace is how often the checkpointer may run (interval) and the
// WAL size in frames past which it checkpoints holding the gate
// (resetFrames).
type checkpointPace struct {
	interval    time.Duration
	resetFrames int64
}

// checkpointer copies the WAL back into the database file on a connection
// of its own, beside the writes instead of inside them: the store's write
// connection and the read models' connections (Store.OpenRaw) run with
// SQLite's automatic checkpoint off, which would otherwise make whichever
// commit crosses 1000 pages copy and fsync them before it returns (the
// appender or the projector then waits for it while holding the write
// lock). A PASSIVE checkpoint takes no write lock, so appends and
// projections go on while it copies.
//
// Appends and batches that keep committing back to back would leave it
// always a few frames behind, and SQLite starts the WAL file over only when
// a write finds it fully copied: past resetFrames it checkpoints again
// holding the gate (little is left to copy then), and the WAL file stays
// bounded.
type checkpointer struct {
	db      *sql.DB // one connection
	gate    *gate
	log     *slog.Logger
	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
	pace    checkpointPace
	// runs and resets count the checkpoints run, and those that held the
	// gate (diagnostics and tests).
	runs, resets atomic.Int64
}

func newCheckpointer(db *sql.DB, g *gate, pace checkpointPace, log *slog.Logger) *checkpointer {
	return &checkpointer{
		db: db, gate: g, log: log, pace: pace,
		wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// poke tells the checkpointer that a transaction committed; it never
// blocks.
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.stopped)
	pause := time.NewTimer(0)
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.checkpoint()
		pause.Reset(c.pace.interval)
		select {
		case <-c.done:
			return
		case <-pause.C:
		}
	}
}

// checkpoint runs one PASSIVE checkpoint, and a second one holding the
// gate when the WAL has grown past resetFrames.
func (c *checkpointer) checkpoint() {
	ctx := context.Background()
	frames, err := c.passive(ctx)
	if err != nil {
		c.log.Warn("eventstore/sqlite: checkpoint failed", slog.Any("error", err))
		return
	}
	c.runs.Add(1)
	if frames < c.pace.resetFrames {
		return
	}
	if err := c.gate.lock(ctx); err != nil {
		return
	}
	defer c.gate.unlock()
	if _, err := c.passive(ctx); err != nil {
		c.log.Warn("eventstore/sqlite: checkpoint failed", slog.Any("error", err))
		return
	}
	c.resets.Add(1)
}

// passive runs PRAGMA wal_checkpoint(PASSIVE) and returns how many frames
// the WAL holds.
func (c *checkpointer) passive(ctx context.Context) (frames int64, err error) {
	var busy, copied int64
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return 0, translate("checkpoint", err)
	}
	return frames, nil
}

// stop ends run and waits for it.
func (c *checkpointer) stop() {
	close(c.done)
	<-c.stopped
}
