package eventstore

import "sync"

// Notifier is a broadcast wake-up: every Notify wakes everyone waiting on
// the channel Wait returned before it. It carries no data; a woken reader
// polls the store, which remains the truth.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewNotifier returns a ready Notifier.
func NewNotifier() *Notifier { return &Notifier{ch: make(chan struct{})} }

// Wait returns a channel that is closed at the next Notify.
func (n *Notifier) Wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

// Notify wakes every current waiter.
func (n *Notifier) Notify() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}
