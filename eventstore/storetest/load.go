package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

// appendRec is one append of the load test that wrote new events.
type appendRec struct {
	writer, seq int
	stream      string
	events      []eventstore.EventData
	res         eventstore.AppendResult
}

// lite is what the load test keeps of a delivered event.
type lite struct {
	id       uuid.UUID
	stream   string
	revision int64
	position uint64
}

func liteOf(e eventstore.RecordedEvent) lite {
	return lite{e.ID, e.Stream, e.Revision, e.Position}
}

func (l lite) String() string {
	return fmt.Sprintf("%s (stream %q revision %d position %d)", l.id, l.stream, l.revision, l.position)
}

// delivery is what one follower of the log saw, up to the marker event.
type delivery struct {
	name     string
	events   []lite
	caughtUp []int // len(events) when each CaughtUp arrived
	err      error // why it stopped before the marker
}

// loadStats counts what the writers did, for the log.
type loadStats struct {
	appends, retries, conflicts, optimistic, lostRaces, gaveUp atomic.Int64
}

// testWriters is the load test. Concurrent writers append 1 to 3 events at
// a time to shared streams: most with Any, some like a command handler
// (read the revision, append with Exact, retry on conflict), some as
// idempotent retries of their previous append (with any expectation: each
// must return the original result), some as deliberate conflicts (NoStream
// on a stream they wrote to: refused, nothing written). Meanwhile follow
// the log: a subscriber started at 0 before the writers, a subscriber
// started at 0 a third of the way through, and a tailer paging with
// ReadAll. After the writers finish, a marker event is appended; each
// follower must have seen, up to the marker, exactly the final log: every
// appended event once, no refused event, positions strictly increasing,
// each stream's revisions in order. The late subscriber's CaughtUp must
// come once and after every event appended before it subscribed. Every
// AppendResult must name the revision and position of its last event.
func testWriters(t *testing.T, h *harness) {
	cfg := h.load(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("load: %s, seed %d", cfg, seed)
	ctx := h.contextFor(t, cfg.Timeout)
	s := h.store(t, ctx)
	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()

	marker := newEvents("marker", 1)[0]
	early := follow(ctx, "subscriber started before the writers", subscribe(t, ctx, s, 0), marker.ID, h.opts.Timeout)
	tailer := tail(ctx, s, marker.ID)

	var (
		mu       sync.Mutex
		recs     []*appendRec // in completion order
		rejected []uuid.UUID  // ids of refused appends: never stored
		failures []string
		stats    loadStats
		third    = make(chan struct{})
		once     sync.Once
		progress atomic.Int64
	)
	w := &loadWriter{
		s: s, cfg: cfg, stats: &stats,
		record: func(r *appendRec) {
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
		},
		reject: func(ids []uuid.UUID) {
			mu.Lock()
			rejected = append(rejected, ids...)
			mu.Unlock()
		},
		progress: func() {
			if progress.Add(1) == int64(cfg.Writers*cfg.Appends/3) {
				once.Do(func() { close(third) })
			}
		},
		fail: func(format string, args ...any) {
			// Reported by the test goroutine: t must not be used after
			// the test returns, and a writer may outlive a failed test.
			mu.Lock()
			failures = append(failures, fmt.Sprintf(format, args...))
			mu.Unlock()
			stopWriters()
		},
	}
	began := time.Now()
	writersDone := make(chan struct{})
	var wg sync.WaitGroup
	for i := range cfg.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(wctx, i, rand.New(rand.NewPCG(seed, uint64(i))))
		}()
	}
	go func() { wg.Wait(); close(writersDone) }()

	select {
	case <-third:
	case <-writersDone:
	}
	mu.Lock()
	before := make([]uuid.UUID, 0, len(recs))
	for _, r := range recs {
		before = append(before, idsOf(r.events)...)
	}
	mu.Unlock()
	late := follow(ctx, "subscriber started a third of the way", subscribe(t, ctx, s, 0), marker.ID, h.opts.Timeout)

	<-writersDone
	for _, f := range failures {
		t.Error(f)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the writers did not finish within the deadline (%s): %v", cfg.Timeout, err)
	}
	if t.Failed() {
		return
	}
	elapsed := time.Since(began)
	end := mustAppend(t, ctx, s, "load-marker", eventstore.NoStream, marker)

	log := readLog(t, ctx, s, end.Position, 97)
	t.Logf("load: %d events in %d appends (%d idempotent retries, %d refused conflicts, %d optimistic appends with %d lost races, %d given up) in %s",
		len(log)-1, stats.appends.Load(), stats.retries.Load(), stats.conflicts.Load(), stats.optimistic.Load(), stats.lostRaces.Load(), stats.gaveUp.Load(), elapsed.Round(time.Millisecond))
	verifyLoadLog(t, ctx, h.opts, s, log, recs, rejected, marker.ID)

	earlyD, lateD, tailD := <-early, <-late, <-tailer
	for _, d := range []delivery{earlyD, lateD, tailD} {
		verifyDelivery(t, d, log)
	}
	verifyCaughtUp(t, earlyD, nil)
	verifyCaughtUp(t, lateD, before)
}

// loadWriter holds what the writers share.
type loadWriter struct {
	s        eventstore.Store
	cfg      Load
	stats    *loadStats
	record   func(*appendRec)
	reject   func([]uuid.UUID)
	progress func()
	fail     func(format string, args ...any)
}

// run makes one writer's appends. Errors after ctx ended are not reported:
// the test reports the deadline, or another writer's failure stopped it.
func (w *loadWriter) run(ctx context.Context, id int, rng *rand.Rand) {
	var last *appendRec // this writer's last append that wrote events
	var own []string    // streams this writer has written to
	for seq := range w.cfg.Appends {
		if ctx.Err() != nil {
			return
		}
		w.progress()
		w.stats.appends.Add(1)
		stream := fmt.Sprintf("load-%d", rng.IntN(w.cfg.Streams))
		events := func() []eventstore.EventData {
			return newEvents(fmt.Sprintf("writer %d append %d", id, seq), 1+rng.IntN(3))
		}
		switch p := rng.Float64(); {
		case p < 0.10 && last != nil:
			w.stats.retries.Add(1)
			exps := []eventstore.ExpectedRevision{
				eventstore.Any, eventstore.NoStream, eventstore.StreamExists,
				eventstore.Exact(last.res.Revision - int64(len(last.events))), eventstore.Exact(rng.Int64N(1000)),
			}
			exp := exps[rng.IntN(len(exps))]
			res, err := w.s.Append(ctx, last.stream, exp, last.events...)
			if ctx.Err() != nil {
				return
			}
			if err != nil || res != last.res {
				w.fail("writer %d: retry of its append %d to %q with expected %s = %+v, %v; want the original result %+v",
					id, last.seq, last.stream, exp, res, err, last.res)
				return
			}
		case p < 0.15 && len(own) > 0:
			w.stats.conflicts.Add(1)
			target := own[rng.IntN(len(own))]
			evs := events()
			w.reject(idsOf(evs))
			_, err := w.s.Append(ctx, target, eventstore.NoStream, evs...)
			if ctx.Err() != nil {
				return
			}
			var we *eventstore.WrongExpectedRevisionError
			if !errors.As(err, &we) || we.Actual < 0 {
				w.fail("writer %d: Append(%q, NoStream) to a stream it wrote to = %v; want a *WrongExpectedRevisionError with Actual >= 0", id, target, err)
				return
			}
		case p < 0.35:
			w.stats.optimistic.Add(1)
			rec, ok := w.optimistic(ctx, id, seq, stream, events)
			if !ok {
				return
			}
			if rec != nil {
				last = rec
				own = append(own, stream)
			}
		default:
			evs := events()
			res, err := w.s.Append(ctx, stream, eventstore.Any, evs...)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.fail("writer %d: Append(%q, Any, %d events): %v", id, stream, len(evs), err)
				return
			}
			last = &appendRec{writer: id, seq: seq, stream: stream, events: evs, res: res}
			w.record(last)
			own = append(own, stream)
		}
	}
}

// optimistic appends the way a command handler does: read the stream's
// revision, append with Exact, on conflict decide again (new events) and
// retry, up to 20 times. ok is false when the writer must stop; rec is nil
// when it gave up.
func (w *loadWriter) optimistic(ctx context.Context, id, seq int, stream string, events func() []eventstore.EventData) (rec *appendRec, ok bool) {
	for range 20 {
		rev := int64(-1)
		evs, err := w.s.ReadStream(ctx, stream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
		switch {
		case ctx.Err() != nil:
			return nil, false
		case errors.Is(err, eventstore.ErrStreamNotFound):
		case err != nil || len(evs) != 1:
			w.fail("writer %d: ReadStream(%q, backward from the end, limit 1) = %d events, %v", id, stream, len(evs), err)
			return nil, false
		default:
			rev = evs[0].Revision
		}
		attempt := events()
		res, err := w.s.Append(ctx, stream, eventstore.Exact(rev), attempt...)
		if ctx.Err() != nil {
			return nil, false
		}
		if err == nil {
			rec := &appendRec{writer: id, seq: seq, stream: stream, events: attempt, res: res}
			w.record(rec)
			return rec, true
		}
		w.reject(idsOf(attempt))
		var we *eventstore.WrongExpectedRevisionError
		if !errors.As(err, &we) {
			w.fail("writer %d: Append(%q, Exact(%d)): %v", id, stream, rev, err)
			return nil, false
		}
		if we.Actual <= rev {
			w.fail("writer %d: Append(%q, Exact(%d)) refused with Actual %d, but the stream was read at revision %d and only grows", id, stream, rev, we.Actual, rev)
			return nil, false
		}
		w.stats.lostRaces.Add(1)
	}
	w.stats.gaveUp.Add(1)
	return nil, true
}

// follow collects what a subscription delivers up to the marker event,
// and up to CaughtUp if it has not come yet: nothing is appended after the
// marker, so a subscription still catching up must then send CaughtUp,
// within wait.
func follow(ctx context.Context, name string, sub eventstore.Subscription, marker uuid.UUID, wait time.Duration) <-chan delivery {
	out := make(chan delivery, 1)
	go func() {
		d := delivery{name: name}
		defer func() { out <- d }()
		var caughtUpBy <-chan time.Time // set once the marker arrived
		for {
			select {
			case m, ok := <-sub.Messages():
				if !ok {
					d.err = fmt.Errorf("the subscription ended after %d events: Err() = %v", len(d.events), sub.Err())
					return
				}
				if m.CaughtUp {
					d.caughtUp = append(d.caughtUp, len(d.events))
					if caughtUpBy != nil {
						return
					}
					continue
				}
				if caughtUpBy != nil {
					d.err = fmt.Errorf("event %s delivered after the marker, which was appended last", liteOf(m.Event))
					return
				}
				d.events = append(d.events, liteOf(m.Event))
				if m.Event.ID == marker {
					if len(d.caughtUp) > 0 {
						return
					}
					caughtUpBy = time.After(wait)
				}
			case <-caughtUpBy:
				d.err = fmt.Errorf("no CaughtUp within %s after the marker event, the last event appended", wait)
				return
			case <-ctx.Done():
				d.err = fmt.Errorf("no marker event within the deadline, after %d events: %v", len(d.events), ctx.Err())
				return
			}
		}
	}()
	return out
}

// tail follows the log with ReadAll alone, as a consumer without a
// subscription would, up to the marker event.
func tail(ctx context.Context, s eventstore.Store, marker uuid.UUID) <-chan delivery {
	out := make(chan delivery, 1)
	go func() {
		d := delivery{name: "ReadAll tailer"}
		defer func() { out <- d }()
		var after uint64
		for {
			page, err := s.ReadAll(ctx, after, 64)
			if err != nil {
				d.err = fmt.Errorf("ReadAll(after %d, 64): %w", after, err)
				return
			}
			for _, e := range page {
				if e.Position <= after {
					d.err = fmt.Errorf("ReadAll(after %d) returned position %d", after, e.Position)
					return
				}
				after = e.Position
				d.events = append(d.events, liteOf(e))
				if e.ID == marker {
					return
				}
			}
			if len(page) == 0 {
				// Pacing for a poll loop, not synchronisation: the loop is
				// correct whatever the interval.
				select {
				case <-time.After(time.Millisecond):
				case <-ctx.Done():
					d.err = fmt.Errorf("no marker event within the deadline, after %d events: %v", len(d.events), ctx.Err())
					return
				}
			}
		}
	}()
	return out
}

// verifyLoadLog checks the final log against what the writers recorded.
func verifyLoadLog(t *testing.T, ctx context.Context, opts Options, s eventstore.Store, log []eventstore.RecordedEvent, recs []*appendRec, rejected []uuid.UUID, marker uuid.UUID) {
	t.Helper()
	checkLog(t, opts, log)
	if len(log) == 0 || log[len(log)-1].ID != marker {
		t.Fatalf("the marker event, appended last, is not last in the log")
	}
	at := make(map[uuid.UUID]int, len(log))
	for i, e := range log {
		at[e.ID] = i
	}
	var missing []string
	wrote := 1 // the marker
	for _, r := range recs {
		wrote += len(r.events)
		for k, e := range r.events {
			i, ok := at[e.ID]
			if !ok {
				missing = append(missing, fmt.Sprintf("%s (writer %d append %d to %q)", e.ID, r.writer, r.seq, r.stream))
				continue
			}
			got := log[i]
			wantRev := r.res.Revision - int64(len(r.events)-1-k)
			if got.Stream != r.stream || got.Revision != wantRev {
				t.Errorf("writer %d append %d: event %d is at stream %q revision %d, want %q revision %d (AppendResult %+v)",
					r.writer, r.seq, k, got.Stream, got.Revision, r.stream, wantRev, r.res)
			}
			if k == len(r.events)-1 && got.Position != r.res.Position {
				t.Errorf("writer %d append %d: AppendResult.Position = %d, but its last event is at position %d", r.writer, r.seq, r.res.Position, got.Position)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d appended events are not in the log, e.g. %s", len(missing), strings.Join(missing[:min(3, len(missing))], ", "))
	}
	for _, id := range rejected {
		if i, ok := at[id]; ok {
			t.Errorf("event %s of a refused append is in the log at %s", id, liteOf(log[i]))
			break
		}
	}
	if len(log) != wrote {
		t.Errorf("the log holds %d events, the writers wrote %d", len(log), wrote)
	}
	// Each stream reads back as its part of the log.
	byStream := map[string][]eventstore.RecordedEvent{}
	for _, e := range log {
		byStream[e.Stream] = append(byStream[e.Stream], e)
	}
	for stream, want := range byStream {
		if d := diffEvents(readStream(t, ctx, s, stream, eventstore.ReadStreamOptions{}), want); d != "" {
			t.Errorf("ReadStream(%q) against ReadAll: %s", stream, d)
			break
		}
	}
}

// verifyDelivery checks that a follower saw exactly the log, in order.
func verifyDelivery(t *testing.T, d delivery, log []eventstore.RecordedEvent) {
	t.Helper()
	if d.err != nil {
		t.Errorf("%s: %v", d.name, d.err)
	}
	var prev uint64
	for i, e := range d.events {
		if e.position <= prev {
			t.Errorf("%s: message %d is %s after position %d: positions must strictly increase", d.name, i, e, prev)
			break
		}
		prev = e.position
	}
	for i := range min(len(d.events), len(log)) {
		if want := liteOf(log[i]); d.events[i] != want {
			t.Errorf("%s: event %d is %s, the log has %s there; %s", d.name, i, d.events[i], want, summarise(d.events, log))
			return
		}
	}
	if len(d.events) != len(log) {
		t.Errorf("%s: %d events up to the marker, the log holds %d; %s", d.name, len(d.events), len(log), summarise(d.events, log))
	}
}

// summarise says which events a follower missed or saw twice or saw that
// the log does not hold.
func summarise(got []lite, log []eventstore.RecordedEvent) string {
	seen := make(map[uuid.UUID]int, len(got))
	var dups []string
	for _, e := range got {
		seen[e.id]++
		if seen[e.id] == 2 && len(dups) < 3 {
			dups = append(dups, e.String())
		}
	}
	inLog := make(map[uuid.UUID]bool, len(log))
	var missed []string
	nMissed := 0
	for _, e := range log {
		inLog[e.ID] = true
		if seen[e.ID] == 0 {
			nMissed++
			if len(missed) < 3 {
				missed = append(missed, liteOf(e).String())
			}
		}
	}
	var extra []string
	for _, e := range got {
		if !inLog[e.id] && len(extra) < 3 {
			extra = append(extra, e.String())
		}
	}
	return fmt.Sprintf("missed %d (e.g. %s); delivered twice e.g. %s; not in the log e.g. %s",
		nMissed, strings.Join(missed, ", "), strings.Join(dups, ", "), strings.Join(extra, ", "))
}

// verifyCaughtUp checks that CaughtUp came exactly once, after every event
// in mustPrecede.
func verifyCaughtUp(t *testing.T, d delivery, mustPrecede []uuid.UUID) {
	t.Helper()
	if len(d.caughtUp) != 1 {
		t.Errorf("%s: CaughtUp delivered %d times (after events %v), want exactly once", d.name, len(d.caughtUp), d.caughtUp)
		return
	}
	at := make(map[uuid.UUID]int, len(d.events))
	for i, e := range d.events {
		at[e.id] = i
	}
	for _, id := range mustPrecede {
		if i, ok := at[id]; !ok || i >= d.caughtUp[0] {
			t.Errorf("%s: CaughtUp came after %d events, but event %s, appended before the subscription started, came at %d (delivered: %v)",
				d.name, d.caughtUp[0], id, i, ok)
			return
		}
	}
}
