// Package lease elects one leader among a cluster's manager replicas, for
// the work only one of them may do at a time (the scheduler, the audit
// sequencer, ...; see docs/architecture.md). The lease lives beside the
// event store:
//
//   - PostgreSQL (Postgres): a row of the store's leases table (holder,
//     epoch, expiry on the database's clock), taken in one statement when
//     it is free or expired (epoch + 1), renewed by its holder every
//     RenewEvery while holder and epoch still match. The holder gives it
//     up by itself when no renewal succeeded before its local deadline,
//     the start of its last successful renewal + TTL - Margin on its
//     monotonic clock: that comes before the row expires, so a leader
//     that cannot reach the database stops before a follower may take
//     over. Failover after a leader died or hung: at most about TTL +
//     RenewEvery (defaults 5s and 5s/3).
//   - SQLite (File): an exclusive flock on a file beside the database;
//     only processes on the same machine share a SQLite store, and the
//     kernel releases the lock when the holder dies.
//
// Safety comes from the epoch, not from timing. A leader paused (SIGSTOP,
// a long GC or VM pause) past its deadline wakes up believing it leads
// until its timer fires; meanwhile another replica may have taken the
// lease. Postgres's held context carries the eventstore.Fence (lease name,
// epoch), and the PostgreSQL event store checks it in the transaction of
// every append made with that context, refusing it (eventstore.ErrFenced)
// once the epoch moved: a deposed leader's late write is never stored. So
// a leader must make its writes with the context it was given (or one
// derived from it). The SQLite store ignores fences: a paused flock holder
// keeps its lock, so nobody takes over meanwhile.
//
// A session-level advisory lock (the previous PostgreSQL mechanism) is not
// used: a SIGSTOPped holder keeps its TCP connection alive (the kernel
// answers keepalives), so PostgreSQL never released the lock and no
// follower took over.
package lease

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// Lease is one named leadership.
type Lease interface {
	// Acquire blocks until this process holds the lease or ctx ends. The
	// returned context is cancelled when the lease is lost (or ctx ends;
	// context.Cause says why) and carries the lease's eventstore.Fence
	// where the store checks fences; release gives the lease up and must
	// be called once.
	Acquire(ctx context.Context) (held context.Context, release func(), err error)
}

// Run runs fn whenever this process holds the lease, until ctx ends: it
// acquires the lease, runs fn with a context cancelled when the lease is
// lost, and after a loss (or fn returning early) waits retry before trying
// again. It returns nil when ctx ends, or fn's error when fn fails while
// the lease is still held. fn failing with eventstore.ErrFenced (one of its
// appends was refused: another holder took the lease) is a loss, not a
// failure.
func Run(ctx context.Context, l Lease, name string, logger *slog.Logger, retry time.Duration, fn func(ctx context.Context) error) error {
	if logger == nil {
		logger = slog.Default()
	}
	for {
		held, release, err := l.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		attrs := []any{slog.String("lease", name)}
		if f, ok := eventstore.FenceFrom(held); ok {
			attrs = append(attrs, slog.Int64("epoch", f.Epoch))
		}
		logger.Info("lease: acquired, leading", attrs...)
		err = fn(held)
		// A write refused by the fence means the lease moved on, whether or
		// not this holder has noticed yet.
		lost := (held.Err() != nil || errors.Is(err, eventstore.ErrFenced)) && ctx.Err() == nil
		cause := context.Cause(held)
		if held.Err() == nil {
			cause = err
		}
		release()
		switch {
		case ctx.Err() != nil:
			logger.Info("lease: released at stop", attrs...)
			return nil
		case lost:
			logger.Warn("lease: lost; following until it can be taken again", append(attrs, slog.Any("cause", cause), slog.Any("error", err))...)
		case err != nil:
			return err
		default:
			logger.Warn("lease: the leader's work returned early; trying again", slog.String("lease", name))
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// ErrClosed is returned by Acquire on a closed lease.
var ErrClosed = errors.New("lease: closed")
