package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

var concurrencyTests = []suiteTest{
	{"ExactRace", testExactRace},
	{"ConcurrentRetries", testConcurrentRetries},
	{"Writers", testWriters},
}

// testExactRace: in each round, several appenders race to append to one
// stream with the same Exact expectation. Exactly one wins; every loser
// gets a *WrongExpectedRevisionError whose Actual is the winner's
// revision; the final stream holds the winners, dense, in round order.
func testExactRace(t *testing.T, h *harness) {
	const contenders, rounds = 8, 25
	ctx := h.context(t)
	s := h.store(t, ctx)
	const stream = "exact-race"
	type outcome struct {
		id  uuid.UUID
		res eventstore.AppendResult
		err error
	}
	var winners []uuid.UUID
	var last eventstore.AppendResult
	for round := range rounds {
		exp := eventstore.Exact(int64(round) - 1) // NoStream in round 0
		start := make(chan struct{})
		out := make([]outcome, contenders)
		var wg sync.WaitGroup
		for c := range contenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ev := newEvents(fmt.Sprintf("round %d contender %d", round, c), 1)
				<-start
				res, err := s.Append(ctx, stream, exp, ev...)
				out[c] = outcome{ev[0].ID, res, err}
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for c, o := range out {
			if o.err == nil {
				won++
				winners = append(winners, o.id)
				last = o.res
				if o.res.Revision != int64(round) {
					t.Fatalf("round %d: the winner's AppendResult.Revision = %d, want %d", round, o.res.Revision, round)
				}
				continue
			}
			var we *eventstore.WrongExpectedRevisionError
			if !errors.Is(o.err, eventstore.ErrWrongExpectedRevision) || !errors.As(o.err, &we) {
				t.Fatalf("round %d, contender %d: error %v (%T); a lost race must be a *WrongExpectedRevisionError", round, c, o.err, o.err)
			}
			if we.Actual != int64(round) || we.Expected != exp || we.Stream != stream {
				t.Fatalf("round %d, contender %d: WrongExpectedRevisionError{%q, %s, Actual %d}, want {%q, %s, Actual %d} (the winner's revision)",
					round, c, we.Stream, we.Expected, we.Actual, stream, exp, round)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d appends with expected %s succeeded, want exactly 1", round, won, contenders, exp)
		}
	}
	sameIDs(t, "stream after the races", streamEvents(t, ctx, s, stream), winners)
	log := readLog(t, ctx, s, last.Position, 100)
	sameIDs(t, "log after the races", log, winners)
	checkLog(t, h.opts, log) // no loser's event was written
}

// testConcurrentRetries: the same append sent several times at once (a
// client retrying while its first attempt is in flight) is written once
// and every attempt returns the same result, on a new stream (NoStream)
// and on an existing one (Exact).
func testConcurrentRetries(t *testing.T, h *harness) {
	const copies = 8
	ctx := h.context(t)
	s := h.store(t, ctx)
	const stream = "concurrent-retries"
	var want []uuid.UUID
	var got []eventstore.AppendResult
	for round, exp := range []eventstore.ExpectedRevision{eventstore.NoStream, eventstore.Exact(2), eventstore.Any} {
		evs := newEvents(fmt.Sprintf("retried %d", round), 3)
		want = append(want, idsOf(evs)...)
		start := make(chan struct{})
		results := make([]eventstore.AppendResult, copies)
		errs := make([]error, copies)
		var wg sync.WaitGroup
		for c := range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[c], errs[c] = s.Append(ctx, stream, exp, evs...)
			}()
		}
		close(start)
		wg.Wait()
		for c := range copies {
			if errs[c] != nil {
				t.Fatalf("round %d (expected %s): copy %d of the same append failed: %v; every copy must return the one result", round, exp, c, errs[c])
			}
			if results[c] != results[0] {
				t.Fatalf("round %d (expected %s): copies returned different results %+v and %+v", round, exp, results[0], results[c])
			}
		}
		if results[0].Revision != int64(len(want))-1 {
			t.Fatalf("round %d: AppendResult.Revision = %d, want %d", round, results[0].Revision, len(want)-1)
		}
		got = append(got, results[0])
	}
	sameIDs(t, "stream after concurrent retries", streamEvents(t, ctx, s, stream), want)
	log := readLog(t, ctx, s, got[len(got)-1].Position, 100)
	sameIDs(t, "log after concurrent retries", log, want)
	checkLog(t, h.opts, log)
	for round, res := range got {
		if last := log[3*round+2]; res.Position != last.Position {
			t.Errorf("round %d: AppendResult.Position = %d, want %d (its last event)", round, res.Position, last.Position)
		}
	}
}
