package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

var lifecycleTests = []suiteTest{
	{"Close", testClose},
	{"CloseDuringAppends", testCloseDuringAppends},
	{"CancelledContext", testCancelledContext},
}

// testClose: Close returns nil; called again (the factory closes the store
// once more at cleanup) it returns nil or ErrClosed, nothing else; open
// subscriptions end with Err() matching ErrClosed; every operation
// afterwards returns an error matching ErrClosed.
func testClose(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	res := mustAppend(t, ctx, s, "closing", eventstore.NoStream, newEvents("before close", 2)...)
	sub := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, sub, readLog(t, ctx, s, res.Position, 10))
	expectCaughtUp(t, ctx, sub)

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil && !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("second Close = %v, want nil or ErrClosed: Close must be idempotent (the factory closes the store again at cleanup)", err)
	}
	if err := expectEnd(t, ctx, sub); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("Err() of a subscription open when the store closed = %v, want ErrClosed", err)
	}
	closeSub(t, ctx, sub)

	expectClosed := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, eventstore.ErrClosed) {
			t.Errorf("%s after Close: %v, want an error matching ErrClosed", op, err)
		}
	}
	_, err := s.Append(ctx, "closing", eventstore.Any, newEvents("after close", 1)...)
	expectClosed("Append", err)
	_, err = s.Append(ctx, "closing-new", eventstore.NoStream, newEvents("after close", 1)...)
	expectClosed("Append to a new stream", err)
	_, err = s.Append(ctx, "closing", eventstore.Any)
	expectClosed("empty Append", err)
	_, err = s.ReadStream(ctx, "closing", eventstore.ReadStreamOptions{})
	expectClosed("ReadStream", err)
	_, err = s.ReadStream(ctx, "never-written", eventstore.ReadStreamOptions{})
	expectClosed("ReadStream of a missing stream", err)
	_, err = s.ReadAll(ctx, 0, 10)
	expectClosed("ReadAll", err)
	sub2, err := s.Subscribe(ctx, 0)
	expectClosed("Subscribe", err)
	if sub2 != nil {
		closeSub(t, ctx, sub2)
	}
}

// testCloseDuringAppends: Close while appends are in flight does not hang;
// an append either completes or fails, and every append that starts after
// Close has returned fails with ErrClosed.
func testCloseDuringAppends(t *testing.T, h *harness) {
	const appenders = 4
	ctx := h.context(t)
	s := h.store(t, ctx)
	const (
		open int32 = iota
		closing
		closed
	)
	var (
		phase    atomic.Int32
		appended atomic.Int64
		enough   = make(chan struct{})
		once     sync.Once
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string // reported by the test goroutine
		notes    []string
	)
	report := func(list *[]string, format string, args ...any) {
		mu.Lock()
		*list = append(*list, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for i := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				started := phase.Load()
				_, err := s.Append(ctx, "close-during", eventstore.Any, newEvents("racing close", 1+i%2)...)
				ended := phase.Load()
				switch {
				case err == nil && started == closed:
					report(&problems, "appender %d: an Append started after Close returned succeeded", i)
					return
				case err == nil:
					if appended.Add(1) == 20 {
						once.Do(func() { close(enough) })
					}
					continue
				case ended == open:
					report(&problems, "appender %d: Append before Close: %v", i, err)
				case started == closed && !errors.Is(err, eventstore.ErrClosed):
					report(&problems, "appender %d: Append started after Close returned: %v, want ErrClosed", i, err)
				case !errors.Is(err, eventstore.ErrClosed):
					report(&notes, "appender %d: Append in flight during Close: %v", i, err)
				}
				return
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-enough:
	case <-done:
	case <-ctx.Done():
		t.Fatalf("20 appends did not complete within the deadline")
	}
	phase.Store(closing)
	if err := s.Close(); err != nil {
		t.Errorf("Close during appends: %v", err)
	}
	phase.Store(closed)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("appends did not return after Close")
	}
	for _, n := range notes {
		t.Log(n)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// testCancelledContext: with a context already cancelled, Append writes
// nothing and, like ReadStream and ReadAll, returns an error matching
// context.Canceled; Subscribe either returns such an error or a
// subscription that ends with it.
func testCancelledContext(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	before := newEvents("before", 1)
	mustAppend(t, ctx, s, "cancelled", eventstore.NoStream, before...)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	expectCanceled := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want an error matching context.Canceled", op, err)
		}
	}
	_, err := s.Append(cctx, "cancelled", eventstore.Any, newEvents("cancelled", 1)...)
	expectCanceled("Append", err)
	_, err = s.Append(cctx, "cancelled-new", eventstore.NoStream, newEvents("cancelled", 2)...)
	expectCanceled("Append to a new stream", err)
	_, err = s.ReadStream(cctx, "cancelled", eventstore.ReadStreamOptions{})
	expectCanceled("ReadStream", err)
	_, err = s.ReadAll(cctx, 0, 10)
	expectCanceled("ReadAll", err)
	sameIDs(t, "log after appends with a cancelled context", h.settled(t, ctx, s), idsOf(before))
	expectStreamMissing(t, ctx, s, "cancelled-new")

	sub, err := s.Subscribe(cctx, 0)
	if err != nil {
		expectCanceled("Subscribe", err)
		return
	}
	defer closeSub(t, ctx, sub)
	expectCanceled("Subscription.Err() of a subscription with a cancelled context", expectEnd(t, ctx, sub))
}
