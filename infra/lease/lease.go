// Package lease elects one leader among a cluster's manager replicas, for
// the work only one of them may do at a time (the scheduler; see
// docs/architecture.md). The lease lives beside the event store:
//
//   - PostgreSQL: a session-level advisory lock held by a dedicated
//     connection (Postgres). PostgreSQL releases it the moment that
//     connection ends, so a crashed or partitioned leader loses it without
//     any expiry to tune; the holder pings its connection every
//     Options.CheckEvery and gives the lease up when a ping fails.
//   - SQLite: an exclusive flock on a file beside the database (File);
//     only processes on the same machine share a SQLite store, and the
//     kernel releases the lock when the holder dies.
//
// A lease gives liveness and efficiency, not safety: for the short time a
// partitioned leader needs to notice its loss, two replicas may both act.
// What must never happen twice (two placements on the same GPU share) is
// guarded by expected revisions on the streams the leader writes.
package lease

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Lease is one named leadership.
type Lease interface {
	// Acquire blocks until this process holds the lease or ctx ends. The
	// returned context is cancelled when the lease is lost (or ctx ends);
	// release gives the lease up and must be called once.
	Acquire(ctx context.Context) (held context.Context, release func(), err error)
}

// Run runs fn whenever this process holds the lease, until ctx ends: it
// acquires the lease, runs fn with a context cancelled when the lease is
// lost, and after a loss (or fn returning early) waits retry before trying
// again. It returns nil when ctx ends, or fn's error when fn fails while
// the lease is still held.
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
		logger.Info("lease: acquired, leading", slog.String("lease", name))
		err = fn(held)
		lost := held.Err() != nil && ctx.Err() == nil
		release()
		switch {
		case ctx.Err() != nil:
			logger.Info("lease: released at stop", slog.String("lease", name))
			return nil
		case lost:
			logger.Warn("lease: lost; following until it can be taken again", slog.String("lease", name), slog.Any("error", err))
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
