package podman

import (
	"context"
	"sync"
)

// keyLock is a set of mutexes by key, created on demand and dropped when
// unused, that a waiter can give up on when its context ends. It
// serialises the calls of one process that must not interleave for the
// same kernel or container; across processes Podman's name uniqueness is
// the guard.
type keyLock struct {
	mu      sync.Mutex
	entries map[string]*keyEntry
}

type keyEntry struct {
	sem  chan struct{} // holds one token while locked
	refs int           // holders and waiters
}

// lock takes the lock for key, or returns ctx's error. The returned
// function releases it.
func (l *keyLock) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.entries == nil {
		l.entries = make(map[string]*keyEntry)
	}
	e := l.entries[key]
	if e == nil {
		e = &keyEntry{sem: make(chan struct{}, 1)}
		l.entries[key] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.sem <- struct{}{}:
		return func() {
			<-e.sem
			l.release(key, e)
		}, nil
	case <-ctx.Done():
		l.release(key, e)
		return nil, ctx.Err()
	}
}

func (l *keyLock) release(key string, e *keyEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(l.entries, key)
	}
}
