package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

var subscribeTests = []suiteTest{
	{"EmptyStore", testSubscribeEmptyStore},
	{"CatchUpThenLive", testSubscribeCatchUpThenLive},
	{"FromPosition", testSubscribeFromPosition},
	{"ResumeFromCheckpoint", testSubscribeResume},
	{"Close", testSubscribeClose},
	{"ContextCancel", testSubscribeContextCancel},
}

// testSubscribeEmptyStore: on an empty store CaughtUp comes first, then
// live events as they are appended.
func testSubscribeEmptyStore(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	sub := subscribe(t, ctx, s, 0)
	expectCaughtUp(t, ctx, sub)
	mustAppend(t, ctx, s, "live-a", eventstore.NoStream, newEvents("live", 2)...)
	res := mustAppend(t, ctx, s, "live-b", eventstore.NoStream, newEvents("live", 1)...)
	expectEvents(t, ctx, sub, readLog(t, ctx, s, res.Position, 100))
}

// testSubscribeCatchUpThenLive: every event that existed at subscribe time
// comes before CaughtUp (more than one default batch of the polling
// engine), CaughtUp comes once, live events follow, each equal to what
// ReadAll returns.
func testSubscribeCatchUpThenLive(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	var res eventstore.AppendResult
	for i := range 12 {
		res = mustAppend(t, ctx, s, fmt.Sprintf("catch-up-%d", i%3), eventstore.Any, newEvents("history", 100)...)
	}
	history := readLog(t, ctx, s, res.Position, 500)
	if len(history) != 1200 {
		t.Fatalf("ReadAll returned %d events, want 1200", len(history))
	}
	sub := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, sub, history)
	expectCaughtUp(t, ctx, sub)

	for i := range 3 {
		res := mustAppend(t, ctx, s, fmt.Sprintf("catch-up-%d", i), eventstore.Any, newEvents("live", 2)...)
		live := readLogAfter(t, ctx, s, history[len(history)-1].Position, res.Position, 100)
		if len(live) != 2 {
			t.Fatalf("ReadAll after a live append of 2 events = %v", positions(live))
		}
		expectEvents(t, ctx, sub, live) // a second CaughtUp would fail here
		history = append(history, live...)
	}
	checkLog(t, h.opts, history)
}

// testSubscribeFromPosition: a subscription from a position delivers the
// events after it, whether the position is an event's or lies between
// two, then CaughtUp; from the head, CaughtUp comes first.
func testSubscribeFromPosition(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	var res eventstore.AppendResult
	for i := range 5 {
		res = mustAppend(t, ctx, s, fmt.Sprintf("from-%d", i%2), eventstore.Any, newEvents("from", 2)...)
	}
	log := readLog(t, ctx, s, res.Position, 100)
	for _, tt := range []struct {
		name  string
		after uint64
		want  []eventstore.RecordedEvent
	}{
		{"from 0", 0, log},
		{"from an event's position", log[3].Position, log[4:]},
		{"from between two positions", log[4].Position - 1, log[4:]},
		{"from the next to last", log[8].Position, log[9:]},
		{"from the head", log[9].Position, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := subscribe(t, ctx, s, tt.after)
			expectEvents(t, ctx, sub, tt.want)
			expectCaughtUp(t, ctx, sub)
			closeSub(t, ctx, sub)
		})
	}
	sub := subscribe(t, ctx, s, log[9].Position)
	expectCaughtUp(t, ctx, sub)
	res = mustAppend(t, ctx, s, "from-live", eventstore.NoStream, newEvents("live", 1)...)
	expectEvents(t, ctx, sub, readLogAfter(t, ctx, s, log[9].Position, res.Position, 10))
}

// testSubscribeResume: a consumer that closes its subscription and
// subscribes again from the last position it processed continues with
// exactly the next event.
func testSubscribeResume(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	var res eventstore.AppendResult
	for i := range 5 {
		res = mustAppend(t, ctx, s, fmt.Sprintf("resume-%d", i%2), eventstore.Any, newEvents("resume", 2)...)
	}
	log := readLog(t, ctx, s, res.Position, 100)

	first := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, first, log[:4])
	checkpoint := log[3].Position
	closeSub(t, ctx, first)
	if err := expectEnd(t, ctx, first); err != nil {
		t.Fatalf("Err() after Close = %v, want nil", err)
	}

	second := subscribe(t, ctx, s, checkpoint)
	expectEvents(t, ctx, second, log[4:])
	expectCaughtUp(t, ctx, second)
	res = mustAppend(t, ctx, s, "resume-live", eventstore.NoStream, newEvents("live", 1)...)
	live := readLogAfter(t, ctx, s, log[9].Position, res.Position, 10)
	expectEvents(t, ctx, second, live)
	checkpoint = live[0].Position
	closeSub(t, ctx, second)

	res = mustAppend(t, ctx, s, "resume-live", eventstore.Exact(0), newEvents("while away", 2)...)
	third := subscribe(t, ctx, s, checkpoint)
	missed := readLogAfter(t, ctx, s, checkpoint, res.Position, 10)
	if len(missed) != 2 {
		t.Fatalf("ReadAll after the checkpoint = %d events, want 2", len(missed))
	}
	expectEvents(t, ctx, third, missed)
	expectCaughtUp(t, ctx, third)
}

// testSubscribeClose: Close ends the subscription: Messages is closed, Err()
// is nil, and Close can be called again.
func testSubscribeClose(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	res := mustAppend(t, ctx, s, "close", eventstore.NoStream, newEvents("close", 3)...)
	for _, tt := range []struct {
		name    string
		consume int // messages read before Close
	}{{"before reading", 0}, {"mid catch-up", 2}, {"after CaughtUp", 4}} {
		t.Run(tt.name, func(t *testing.T) {
			sub := subscribe(t, ctx, s, 0)
			for i := range tt.consume {
				next(t, ctx, sub, fmt.Sprintf("message %d", i+1))
			}
			closeSub(t, ctx, sub)
			if err := expectEnd(t, ctx, sub); err != nil {
				t.Errorf("Err() after Close = %v, want nil", err)
			}
			closeSub(t, ctx, sub)
		})
	}
	// The store is unaffected.
	sub := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, sub, readLog(t, ctx, s, res.Position, 100))
	expectCaughtUp(t, ctx, sub)
}

// testSubscribeContextCancel: cancelling the subscription's context ends
// it with Err() matching context.Canceled; Close afterwards returns.
func testSubscribeContextCancel(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	mustAppend(t, ctx, s, "cancel", eventstore.NoStream, newEvents("cancel", 3)...)
	for _, consume := range []int{0, 4} {
		t.Run(fmt.Sprintf("after %d messages", consume), func(t *testing.T) {
			subCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			sub := subscribe(t, subCtx, s, 0)
			for i := range consume {
				next(t, ctx, sub, fmt.Sprintf("message %d", i+1))
			}
			cancel()
			if err := expectEnd(t, ctx, sub); !errors.Is(err, context.Canceled) {
				t.Errorf("Err() after the context was cancelled = %v, want context.Canceled", err)
			}
			closeSub(t, ctx, sub)
		})
	}
}
