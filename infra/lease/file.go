package lease

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// File is a lease held as an exclusive flock on a file (e.g. beside a
// SQLite database). The kernel releases it when the holder exits.
type File struct {
	path      string
	pollEvery time.Duration
}

var _ Lease = (*File)(nil)

// NewFile returns the lease of path, tried every pollEvery while another
// process holds it (default 1s).
func NewFile(path string, pollEvery time.Duration) *File {
	if pollEvery <= 0 {
		pollEvery = time.Second
	}
	return &File{path: path, pollEvery: pollEvery}
}

// Acquire implements Lease. The lease is lost only when the process ends.
func (l *File) Acquire(ctx context.Context) (context.Context, func(), error) {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("lease: open %s: %w", l.path, err)
	}
	for {
		ok, err := l.try(f)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if ok {
			break
		}
		t := time.NewTimer(l.pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	held, cancel := context.WithCancel(ctx)
	release := func() {
		cancel()
		// Closing the descriptor drops the flock.
		f.Close()
	}
	return held, release, nil
}

// try takes the lock on f (the lease's file) if no one holds it, without
// waiting.
func (l *File) try(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch err {
	case nil:
		return true, nil
	case syscall.EWOULDBLOCK, syscall.EINTR:
		return false, nil
	}
	return false, fmt.Errorf("lease: lock %s: %w", l.path, err)
}
