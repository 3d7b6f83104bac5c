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
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, nil, fmt.Errorf("lease: lock %s: %w", l.path, err)
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
