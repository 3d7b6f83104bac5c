package sqlite

import "context"

// gate orders the write transactions of one process on the database
// file: the store's writer and the read models' batches (projections over
// OpenRaw) take it before BEGIN IMMEDIATE and give it back after COMMIT or
// ROLLBACK. SQLite alone would make a transaction that finds the write
// lock taken sleep in its busy handler (1, 2, 5 ... up to 100 ms) and try
// again, so a writer that takes the lock back at once (a projector
// catching up, the store under a burst of appends) starves the other for
// whole sleeps; the gate hands the lock over in arrival order instead,
// with no sleep. Other processes on the same file still meet the busy
// handler.
type gate struct{ ch chan struct{} }

func newGate() *gate { return &gate{ch: make(chan struct{}, 1)} }

// lock waits for the gate (goroutines blocked on it are let in in the
// order they came: a channel's blocked senders are served first in, first
// out) or for ctx to end.
func (g *gate) lock(ctx context.Context) error {
	select {
	case g.ch <- struct{}{}:
		return nil
	default:
	}
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) unlock() { <-g.ch }

// LockWrites waits until no other write transaction of this process on
// the store's file is open or about to open, and holds that until release
// is called (once; later calls do nothing). A writer holding it still
// begins with BEGIN IMMEDIATE, which then waits only for other processes.
// Use it around transactions on handles from OpenRaw; the store's own
// appends take it for each of their group commits.
func (s *Store) LockWrites(ctx context.Context) (release func(), err error) {
	if err := s.gate.lock(ctx); err != nil {
		return nil, err
	}
	done := false
	return func() {
		if !done {
			done = true
			s.gate.unlock()
			s.checkpoints.poke()
		}
	}, nil
}
