package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// writer is the goroutine that owns the write connection and applies
// appends by group commit.
type writer struct {
	conn     *writeConn
	requests chan *appendRequest
	// stopped is closed when run returns, after the last queued request.
	stopped  chan struct{}
	maxBatch int
	notifier *eventstore.Notifier
	// tail receives each committed batch's events (nil: none kept).
	tail *tail
	// gate is taken around each transaction (Store.LockWrites).
	gate *gate
	// committed is called after each commit (the checkpointer's poke).
	committed func()
	log       *slog.Logger

	// outcomes is reused from batch to batch (only run touches it).
	outcomes []appendOutcome

	// full is the error of the last transaction when it failed because
	// the disk is full, nil once one commits (Store.Full).
	full atomic.Pointer[error]

	// Counters, read by tests and diagnostics.
	batches    atomic.Uint64 // transactions attempted
	appendsRun atomic.Uint64 // requests taken
}

func newWriter(conn *writeConn, opts Options, n *eventstore.Notifier, t *tail, g *gate, committed func(), log *slog.Logger) *writer {
	return &writer{
		conn:      conn,
		requests:  make(chan *appendRequest, opts.MaxBatch),
		stopped:   make(chan struct{}),
		maxBatch:  opts.MaxBatch,
		notifier:  n,
		tail:      t,
		gate:      g,
		committed: committed,
		log:       log,
	}
}

// run applies requests until the request channel is closed and drained.
func (w *writer) run() {
	defer close(w.stopped)
	batch := make([]*appendRequest, 0, w.maxBatch)
	for req := range w.requests {
		batch = append(batch[:0], req)
		// Let the callers answered by the previous batch queue their next
		// append before this batch is cut: with 16 busy writers it took
		// the appends per transaction from about 8 to about 12 here, and a
		// lone caller waits for an fsync anyway.
		runtime.Gosched()
	fill:
		for len(batch) < w.maxBatch {
			select {
			case next, ok := <-w.requests:
				if !ok {
					break fill // closed: the outer range ends after this batch
				}
				batch = append(batch, next)
			default:
				break fill
			}
		}
		w.process(batch)
		clear(batch)
	}
}

// process takes the live requests of batch, applies them and answers every
// one of them.
func (w *writer) process(batch []*appendRequest) {
	live := batch[:0]
	for _, req := range batch {
		if req.take() {
			live = append(live, req)
		}
	}
	if len(live) == 0 {
		return
	}
	w.appendsRun.Add(uint64(len(live)))
	out := w.outcomes[:0]
	for range live {
		out = append(out, appendOutcome{})
	}
	w.outcomes = out

	wrote, commitFailed, err := w.runBatch(live, out)
	w.noteFull(err)
	switch {
	case err == nil:
	case commitFailed || len(live) == 1:
		w.log.Error("eventstore/sqlite: append transaction failed", slog.Int("appends", len(live)), slog.Any("error", err))
		for i := range out {
			out[i] = appendOutcome{err: err}
		}
	default:
		// Nothing of the batch was written. One append may be what broke
		// it: give each its own transaction so the others still commit.
		w.log.Warn("eventstore/sqlite: batch transaction failed, retrying its appends one by one",
			slog.Int("appends", len(live)), slog.Any("error", err))
		wrote = false
		for i := range live {
			one, _, err := w.runBatch(live[i:i+1], out[i:i+1])
			w.noteFull(err)
			if err != nil {
				w.log.Error("eventstore/sqlite: append transaction failed", slog.String("stream", live[i].parts[0].stream), slog.Int("streams", len(live[i].parts)), slog.Any("error", err))
				out[i] = appendOutcome{err: err}
			}
			wrote = wrote || one
		}
	}
	if wrote {
		w.notifier.Notify()
	}
	for i, req := range live {
		req.reply <- out[i]
	}
	clear(out)
}

// noteFull records the outcome of a transaction for Store.Full.
func (w *writer) noteFull(err error) {
	switch {
	case err == nil:
		if w.full.Load() != nil {
			w.log.Info("eventstore/sqlite: appends commit again (the disk has room)")
			w.full.Store(nil)
		}
	case errors.Is(err, eventstore.ErrStorageFull):
		w.full.Store(&err)
	}
}

// runBatch applies batch in one transaction, filling out with each append's
// own outcome. A non-nil error means the transaction as a whole failed and
// was rolled back: nothing of batch was written and out is meaningless.
// commitFailed tells that it was the COMMIT that failed. wrote reports
// whether the committed transaction wrote any event.
func (w *writer) runBatch(batch []*appendRequest, out []appendOutcome) (wrote, commitFailed bool, err error) {
	ctx := context.Background() // the batch outlives any one caller's context
	c := w.conn
	w.batches.Add(1)
	if err := w.gate.lock(ctx); err != nil {
		return false, false, err
	}
	defer w.gate.unlock()
	if c.conn == nil { // a previous reset failed half-way
		if err := c.connect(ctx, nil); err != nil {
			return false, false, translate("reopen write connection", err)
		}
	}
	if _, err := c.begin.ExecContext(ctx); err != nil {
		return false, false, w.abort(ctx, translate("begin", err))
	}
	var last int64
	if err := c.maxPosition.QueryRowContext(ctx).Scan(&last); err != nil {
		return false, false, w.abort(ctx, translate("read last position", err))
	}
	tx := batchTx{conn: c, next: last + 1, recordedAt: time.Now().UnixMicro(), keep: w.tail != nil}
	for i, req := range batch {
		results, refused, err := tx.applyRequest(ctx, req)
		if err != nil {
			return false, false, w.abort(ctx, err)
		}
		out[i] = appendOutcome{results: results, err: refused}
	}
	if _, err := c.commit.ExecContext(ctx); err != nil {
		return false, true, w.abort(ctx, translate("commit", err))
	}
	w.committed()
	w.tail.add(tx.recorded)
	return tx.next != last+1, false, nil
}

// abort rolls back the open transaction after err. If the ROLLBACK fails
// too, the connection's state is unknown (SQLite may have rolled back on
// its own already): it is replaced by a fresh one.
func (w *writer) abort(ctx context.Context, err error) error {
	if _, rbErr := w.conn.rollback.ExecContext(ctx); rbErr != nil {
		w.log.Warn("eventstore/sqlite: rollback failed, reopening the write connection", slog.Any("error", rbErr))
		if resetErr := w.conn.reset(ctx); resetErr != nil {
			return errors.Join(err, translate("reopen write connection", resetErr))
		}
	}
	return err
}
