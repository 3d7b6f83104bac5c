package localfs

import (
	"context"
	"sync"
)

// semaphores are one-holder locks per key that a waiter may give up on
// (its context), made on first use and dropped when unused.
type semaphores struct {
	mu sync.Mutex
	m  map[string]*semaphore
}

type semaphore struct {
	ch    chan struct{}
	users int
}

// acquire takes key's lock, waiting at most until ctx ends, and returns
// the function that releases it.
func (k *semaphores) acquire(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*semaphore{}
	}
	sem := k.m[key]
	if sem == nil {
		sem = &semaphore{ch: make(chan struct{}, 1)}
		k.m[key] = sem
	}
	sem.users++
	k.mu.Unlock()
	done := func() {
		k.mu.Lock()
		if sem.users--; sem.users == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
	select {
	case sem.ch <- struct{}{}:
		return func() { <-sem.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}
