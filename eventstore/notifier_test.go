package eventstore_test

import (
	"sync"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestNotifierWakesCurrentWaitersOnly(t *testing.T) {
	t.Parallel()
	n := eventstore.NewNotifier()
	a, b := n.Wait(), n.Wait()
	if isClosed(a) || isClosed(b) {
		t.Fatal("a Wait channel is closed before any Notify")
	}
	n.Notify()
	if !isClosed(a) || !isClosed(b) {
		t.Fatal("Notify did not wake every waiter")
	}
	c := n.Wait()
	if isClosed(c) {
		t.Fatal("a Wait taken after Notify is already closed")
	}
	n.Notify()
	n.Notify() // no waiter: must not panic on a closed channel
	if !isClosed(c) {
		t.Fatal("second Notify did not wake the new waiter")
	}
}

func TestNotifierConcurrentUse(t *testing.T) {
	t.Parallel()
	n := eventstore.NewNotifier()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 500 {
				n.Notify()
			}
		}()
		go func() {
			defer wg.Done()
			for range 500 {
				_ = isClosed(n.Wait())
			}
		}()
	}
	wg.Wait()
	w := n.Wait()
	n.Notify()
	if !isClosed(w) {
		t.Fatal("Notify after concurrent use did not wake the waiter")
	}
}
