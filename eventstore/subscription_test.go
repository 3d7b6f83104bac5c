package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// fakeLog is a Reader over an in-memory log with sparse positions (10, 20,
// ...). An event can be held back for a number of reads, the way the
// PostgreSQL horizon hides a committed event until older transactions end;
// reads stop at the first hidden event, as an honest backend must.
type fakeLog struct {
	mu     sync.Mutex
	events []eventstore.RecordedEvent
	hidden []int // reads during which events[i] stays invisible
	errs   []error
	reads  int
}

func (l *fakeLog) add(n, hiddenReads int) []eventstore.RecordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]eventstore.RecordedEvent, n)
	for i := range out {
		out[i] = eventstore.RecordedEvent{
			ID:       eventstore.NewEventID(),
			Stream:   "s",
			Type:     "t",
			Version:  1,
			Revision: int64(len(l.events)),
			Position: uint64(len(l.events)+1) * 10,
			Data:     []byte(`{}`),
		}
		l.events = append(l.events, out[i])
		l.hidden = append(l.hidden, hiddenReads)
	}
	return out
}

func (l *fakeLog) failNext(errs ...error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, errs...)
}

func (l *fakeLog) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	var out []eventstore.RecordedEvent
	for i, e := range l.events {
		if l.hidden[i] > 0 {
			l.hidden[i]--
			break
		}
		if e.Position > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// readerFunc is a Reader scripted by a function, for misbehaving backends.
type readerFunc func(after uint64, limit int) ([]eventstore.RecordedEvent, error)

func (f readerFunc) ReadAll(_ context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	return f(after, limit)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func recv(t *testing.T, ctx context.Context, sub eventstore.Subscription, what string) eventstore.Message {
	t.Helper()
	select {
	case m, ok := <-sub.Messages():
		if !ok {
			t.Fatalf("subscription ended (Err() = %v) while waiting for %s", sub.Err(), what)
		}
		return m
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

func expectEvents(t *testing.T, ctx context.Context, sub eventstore.Subscription, want []eventstore.RecordedEvent) {
	t.Helper()
	for i, w := range want {
		m := recv(t, ctx, sub, fmt.Sprintf("event %d of %d (position %d)", i+1, len(want), w.Position))
		if m.CaughtUp {
			t.Fatalf("got CaughtUp, want event %d of %d (position %d)", i+1, len(want), w.Position)
		}
		if m.Event.ID != w.ID || m.Event.Position != w.Position {
			t.Fatalf("got event at position %d, want position %d", m.Event.Position, w.Position)
		}
	}
}

func expectCaughtUp(t *testing.T, ctx context.Context, sub eventstore.Subscription) {
	t.Helper()
	if m := recv(t, ctx, sub, "CaughtUp"); !m.CaughtUp {
		t.Fatalf("got event at position %d, want CaughtUp", m.Event.Position)
	}
}

// expectEnd waits until Messages is closed, skipping buffered messages, and
// returns Err().
func expectEnd(t *testing.T, ctx context.Context, sub eventstore.Subscription) error {
	t.Helper()
	for {
		select {
		case _, ok := <-sub.Messages():
			if !ok {
				return sub.Err()
			}
		case <-ctx.Done():
			t.Fatal("timed out waiting for the subscription to end")
		}
	}
}

// closeWithin calls sub.Close and fails if it does not return.
func closeWithin(t *testing.T, ctx context.Context, sub eventstore.Subscription) {
	t.Helper()
	done := make(chan struct{})
	go func() { sub.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
}

func TestPollingSubscriptionCatchesUpThenFollows(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	log := &fakeLog{}
	first := log.add(10, 0)
	n := eventstore.NewNotifier()
	// An hour-long interval: only wake-ups can deliver the live events.
	sub := eventstore.NewPollingSubscription(ctx, log, n, 0, eventstore.PollOptions{BatchSize: 3, Interval: time.Hour})
	defer closeWithin(t, ctx, sub)

	expectEvents(t, ctx, sub, first)
	expectCaughtUp(t, ctx, sub)
	for range 3 {
		live := log.add(2, 0)
		n.Notify()
		expectEvents(t, ctx, sub, live) // no second CaughtUp in between
	}
	closeWithin(t, ctx, sub)
	if err := expectEnd(t, ctx, sub); err != nil {
		t.Errorf("Err() after Close = %v, want nil", err)
	}
}

func TestPollingSubscriptionFromPosition(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	log := &fakeLog{}
	evs := log.add(6, 0)
	for _, tt := range []struct {
		name  string
		after uint64
		want  []eventstore.RecordedEvent
	}{
		{"exact position", evs[2].Position, evs[3:]},
		{"between positions", evs[2].Position + 5, evs[3:]},
		{"at the head", evs[5].Position, nil},
		{"beyond the head", 1 << 40, nil},
		{"batch boundary", 0, evs}, // 6 events, batch of 3: an exactly full last batch
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := eventstore.NewPollingSubscription(ctx, log, nil, tt.after, eventstore.PollOptions{BatchSize: 3, Interval: time.Hour})
			defer closeWithin(t, ctx, sub)
			expectEvents(t, ctx, sub, tt.want)
			expectCaughtUp(t, ctx, sub)
		})
	}
}

func TestPollingSubscriptionPollsWithoutNotifier(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	log := &fakeLog{}
	sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: 2 * time.Millisecond})
	defer closeWithin(t, ctx, sub)
	expectCaughtUp(t, ctx, sub)
	expectEvents(t, ctx, sub, log.add(3, 0))
}

// A wake-up that finds nothing because the backend still holds the event
// back is chased with short polls, not the (here hour-long) interval.
func TestPollingSubscriptionChasesHeldBackEvents(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	log := &fakeLog{}
	n := eventstore.NewNotifier()
	sub := eventstore.NewPollingSubscription(ctx, log, n, 0, eventstore.PollOptions{Interval: time.Hour})
	defer closeWithin(t, ctx, sub)
	expectCaughtUp(t, ctx, sub)
	live := log.add(1, 3)
	n.Notify()
	expectEvents(t, ctx, sub, live)
}

func TestPollingSubscriptionRetriesPassingErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	log := &fakeLog{}
	evs := log.add(3, 0)
	boom := errors.New("connection reset")
	log.failNext(boom, boom)
	sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: time.Millisecond})
	defer closeWithin(t, ctx, sub)
	// A failed read must not count as having caught up.
	expectEvents(t, ctx, sub, evs)
	expectCaughtUp(t, ctx, sub)
}

func TestPollingSubscriptionEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// run starts the subscription and ends it.
		run  func(ctx context.Context, log *fakeLog) eventstore.Subscription
		want error // nil: Err() must be nil
	}{
		{"Close", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: time.Hour})
			sub.Close()
			return sub
		}, nil},
		{"Close while blocked on a full buffer", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			log.add(10, 0)
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Buffer: 1, Interval: time.Hour})
			sub.Close()
			return sub
		}, nil},
		{"context cancelled", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			ctx, cancel := context.WithCancel(ctx)
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: time.Hour})
			cancel()
			return sub
		}, context.Canceled},
		{"context cancelled while blocked on a full buffer", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			log.add(10, 0)
			ctx, cancel := context.WithCancel(ctx)
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Buffer: 1, Interval: time.Hour})
			cancel()
			return sub
		}, context.Canceled},
		{"store done", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			done := make(chan struct{})
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: time.Hour, Done: done})
			close(done)
			return sub
		}, eventstore.ErrClosed},
		{"store done while blocked on a full buffer", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			log.add(10, 0)
			done := make(chan struct{})
			sub := eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Buffer: 1, Interval: time.Hour, Done: done})
			close(done)
			return sub
		}, eventstore.ErrClosed},
		{"reader closed", func(ctx context.Context, log *fakeLog) eventstore.Subscription {
			log.failNext(eventstore.ErrClosed)
			return eventstore.NewPollingSubscription(ctx, log, nil, 0, eventstore.PollOptions{Interval: time.Hour})
		}, eventstore.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			sub := tt.run(ctx, &fakeLog{})
			err := expectEnd(t, ctx, sub)
			if tt.want == nil && err != nil {
				t.Errorf("Err() = %v, want nil", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Err() = %v, want %v", err, tt.want)
			}
			closeWithin(t, ctx, sub) // Close after the end, and twice, returns
			closeWithin(t, ctx, sub)
		})
	}
}

func TestPollingSubscriptionDetectsOutOfOrderBackend(t *testing.T) {
	t.Parallel()
	ev := func(pos uint64) eventstore.RecordedEvent {
		return eventstore.RecordedEvent{ID: eventstore.NewEventID(), Position: pos}
	}
	e1, e2, e3 := ev(1), ev(2), ev(3)
	tests := []struct {
		name      string
		r         readerFunc
		delivered []eventstore.RecordedEvent
	}{
		{"decreasing within a batch", func(after uint64, limit int) ([]eventstore.RecordedEvent, error) {
			return []eventstore.RecordedEvent{e1, e3, e2}, nil
		}, []eventstore.RecordedEvent{e1, e3}},
		{"ignores after", func(after uint64, limit int) ([]eventstore.RecordedEvent, error) {
			return []eventstore.RecordedEvent{e1, e2, e3}, nil // a full batch: read again at once
		}, []eventstore.RecordedEvent{e1, e2, e3}},
		{"position zero", func(after uint64, limit int) ([]eventstore.RecordedEvent, error) {
			return []eventstore.RecordedEvent{ev(0)}, nil
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			sub := eventstore.NewPollingSubscription(ctx, tt.r, nil, 0, eventstore.PollOptions{BatchSize: 3, Interval: time.Hour})
			expectEvents(t, ctx, sub, tt.delivered)
			err := expectEnd(t, ctx, sub)
			if err == nil || errors.Is(err, eventstore.ErrClosed) || errors.Is(err, context.Canceled) {
				t.Errorf("Err() = %v, want an out-of-order error", err)
			}
		})
	}
}
