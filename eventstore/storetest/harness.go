package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

// harness carries the options and the factory to every test.
type harness struct {
	opts     Options
	newStore func(t *testing.T) eventstore.Store
}

// context returns a context that ends after the subtest timeout.
func (h *harness) context(t *testing.T) context.Context {
	return h.contextFor(t, h.opts.Timeout)
}

// contextFor returns a context that ends after d, or a little before the
// test binary's deadline, so that a hang fails the test with a message
// instead of a goroutine dump.
func (h *harness) contextFor(t *testing.T, d time.Duration) context.Context {
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - 10*time.Second; left < d {
			d = max(left, time.Second)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// store returns a fresh store from the factory, checked to be empty.
func (h *harness) store(t *testing.T, ctx context.Context) eventstore.Store {
	t.Helper()
	s := h.newStore(t)
	if s == nil {
		t.Fatal("newStore returned nil")
	}
	evs, err := s.ReadAll(ctx, 0, 10)
	if err != nil {
		t.Fatalf("ReadAll on a fresh store: %v", err)
	}
	if len(evs) != 0 {
		t.Fatalf("newStore returned a store that already holds %d or more events; the factory must return an empty store each time", len(evs))
	}
	return s
}

const eventType = "storetest.appended"

// newEvents returns n events with fresh ids, whose data names tag and the
// event's index.
func newEvents(tag string, n int) []eventstore.EventData {
	out := make([]eventstore.EventData, n)
	for i := range out {
		out[i] = eventstore.EventData{
			ID:      eventstore.NewEventID(),
			Type:    eventType,
			Version: 1,
			Data:    json.RawMessage(fmt.Sprintf(`{"tag":%q,"n":%d}`, tag, i)),
		}
	}
	return out
}

func idsOf(evs []eventstore.EventData) []uuid.UUID {
	out := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func mustAppend(t *testing.T, ctx context.Context, s eventstore.Store, stream string, exp eventstore.ExpectedRevision, evs ...eventstore.EventData) eventstore.AppendResult {
	t.Helper()
	res, err := s.Append(ctx, stream, exp, evs...)
	if err != nil {
		t.Fatalf("Append(%q, expected %s, %d events): %v", stream, exp, len(evs), err)
	}
	return res
}

// readStream reads a stream that must exist.
func readStream(t *testing.T, ctx context.Context, s eventstore.Store, stream string, opts eventstore.ReadStreamOptions) []eventstore.RecordedEvent {
	t.Helper()
	evs, err := s.ReadStream(ctx, stream, opts)
	if err != nil {
		t.Fatalf("ReadStream(%q, %+v): %v", stream, opts, err)
	}
	return evs
}

// streamEvents reads a whole stream forward; nil when it does not exist.
func streamEvents(t *testing.T, ctx context.Context, s eventstore.Store, stream string) []eventstore.RecordedEvent {
	t.Helper()
	evs, err := s.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("ReadStream(%q): %v", stream, err)
	}
	if len(evs) == 0 {
		t.Fatalf("ReadStream(%q) returned no events and no error; a stream without events must be a *StreamNotFoundError", stream)
	}
	return evs
}

// expectStreamMissing fails unless stream has no events.
func expectStreamMissing(t *testing.T, ctx context.Context, s eventstore.Store, stream string) {
	t.Helper()
	evs, err := s.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	var nf *eventstore.StreamNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatalf("ReadStream(%q) = %d events, %v; want a *StreamNotFoundError matching ErrStreamNotFound", stream, len(evs), err)
	}
	if nf.Stream != stream {
		t.Errorf("StreamNotFoundError names stream %q, want %q", nf.Stream, stream)
	}
}

// readLog reads the log up to and including position to (a position an
// AppendResult returned), paging with limit. See readLogAfter.
func readLog(t *testing.T, ctx context.Context, s eventstore.Store, to uint64, limit int) []eventstore.RecordedEvent {
	t.Helper()
	return readLogAfter(t, ctx, s, 0, to, limit)
}

// readLogAfter reads the events with positions in (after, to], paging with
// limit and checking each page: at most limit events, positions above after
// and strictly increasing. ReadAll may hold committed events back for a
// while (PostgreSQL returns only events that no running transaction, in any
// schema, can precede), so the log is read up to a known position, and an
// empty page before it is polled again until the deadline. Passing over
// position to without returning it is a skipped event.
func readLogAfter(t *testing.T, ctx context.Context, s eventstore.Store, after, to uint64, limit int) []eventstore.RecordedEvent {
	t.Helper()
	var out []eventstore.RecordedEvent
	for after < to {
		page, err := s.ReadAll(ctx, after, limit)
		if err != nil {
			t.Fatalf("ReadAll(after %d, limit %d), reading up to position %d: %v", after, limit, to, err)
		}
		if len(page) > limit {
			t.Fatalf("ReadAll(after %d, limit %d) returned %d events", after, limit, len(page))
		}
		if len(page) == 0 {
			// Polling pace while the backend holds events back.
			select {
			case <-ctx.Done():
				t.Fatalf("ReadAll has not returned position %d, which an AppendResult named, within the deadline: it returns nothing after position %d (a wrong AppendResult.Position, or an event held back for good)", to, after)
			case <-time.After(2 * time.Millisecond):
			}
			continue
		}
		for _, e := range page {
			if e.Position <= after {
				t.Fatalf("ReadAll(after %d, limit %d) returned position %d, not above %d: positions must strictly increase", after, limit, e.Position, after)
			}
			if e.Position > to {
				t.Fatalf("ReadAll(after %d) returned position %d but not position %d, an appended event", after, e.Position, to)
			}
			after = e.Position
			out = append(out, e)
		}
	}
	return out
}

// sentinelStream holds the events settled appends to close the log.
const sentinelStream = "storetest-sentinel"

// settled appends a sentinel event, reads the log up to it, checks the log
// (checkLog), and returns it without the sentinels. An append that returned
// before the sentinel was appended committed before it, so the log up to
// the sentinel is everything such appends wrote: a refused append that
// wrote something anyway shows here.
func (h *harness) settled(t *testing.T, ctx context.Context, s eventstore.Store) []eventstore.RecordedEvent {
	t.Helper()
	res := mustAppend(t, ctx, s, sentinelStream, eventstore.Any, newEvents("sentinel", 1)...)
	log := readLog(t, ctx, s, res.Position, 1000)
	checkLog(t, h.opts, log)
	out := log[:0:0]
	for _, e := range log {
		if e.Stream != sentinelStream {
			out = append(out, e)
		}
	}
	return out
}

// checkLog checks the invariants of a whole log read in position order:
// positions > 0 and strictly increasing (dense when declared), ids unique,
// each stream's revisions 0, 1, 2, ... in position order.
func checkLog(t *testing.T, opts Options, log []eventstore.RecordedEvent) {
	t.Helper()
	next := map[string]int64{}
	seen := make(map[uuid.UUID]int, len(log))
	var prev uint64
	for i, e := range log {
		if e.Position <= prev {
			t.Errorf("log[%d]: position %d after %d; positions must be > 0 and strictly increasing", i, e.Position, prev)
			return
		}
		prev = e.Position
		if opts.DensePositions && e.Position != uint64(i+1) {
			t.Errorf("log[%d]: position %d, want %d (Options.DensePositions: positions 1, 2, 3, ... without gaps)", i, e.Position, i+1)
			return
		}
		if j, dup := seen[e.ID]; dup {
			t.Errorf("log[%d]: event %s already stored at log[%d]", i, e.ID, j)
			return
		}
		seen[e.ID] = i
		if want := next[e.Stream]; e.Revision != want {
			t.Errorf("log[%d]: stream %q revision %d, want %d (revisions are dense from 0, in position order)", i, e.Stream, e.Revision, want)
			return
		}
		next[e.Stream]++
	}
}

// diffEvent describes how got differs from want, "" when it does not.
func diffEvent(got, want eventstore.RecordedEvent) string {
	var d []string
	add := func(field string, g, w any) { d = append(d, fmt.Sprintf("%s %v, want %v", field, g, w)) }
	if got.ID != want.ID {
		add("id", got.ID, want.ID)
	}
	if got.Stream != want.Stream {
		add("stream", fmt.Sprintf("%q", got.Stream), fmt.Sprintf("%q", want.Stream))
	}
	if got.Type != want.Type {
		add("type", fmt.Sprintf("%q", got.Type), fmt.Sprintf("%q", want.Type))
	}
	if got.Version != want.Version {
		add("version", got.Version, want.Version)
	}
	if got.Revision != want.Revision {
		add("revision", got.Revision, want.Revision)
	}
	if got.Position != want.Position {
		add("position", got.Position, want.Position)
	}
	if !got.RecordedAt.Equal(want.RecordedAt) {
		add("recorded_at", got.RecordedAt, want.RecordedAt)
	}
	if !bytes.Equal(got.Data, want.Data) {
		add("data", abbrev(got.Data), abbrev(want.Data))
	}
	if got.Metadata != want.Metadata {
		add("metadata", fmt.Sprintf("%+v", got.Metadata), fmt.Sprintf("%+v", want.Metadata))
	}
	return strings.Join(d, "; ")
}

// abbrev quotes b, cut to a readable length.
func abbrev(b []byte) string {
	const keep = 120
	if len(b) <= keep {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q... (%d bytes)", b[:keep], len(b))
}

// sameEvents fails unless got and want are the same events in the same
// order, field by field.
func sameEvents(t *testing.T, what string, got, want []eventstore.RecordedEvent) {
	t.Helper()
	if d := diffEvents(got, want); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

// diffEvents describes the first difference between two event lists, ""
// when there is none.
func diffEvents(got, want []eventstore.RecordedEvent) string {
	for i := range min(len(got), len(want)) {
		if d := diffEvent(got[i], want[i]); d != "" {
			return fmt.Sprintf("event %d of %d: %s", i, len(want), d)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d events, want %d", len(got), len(want))
	}
	return ""
}

// sameIDs fails unless got holds exactly the events want, in order.
func sameIDs(t *testing.T, what string, got []eventstore.RecordedEvent, want []uuid.UUID) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i].ID != want[i] {
			t.Fatalf("%s: event %d is %s (stream %q revision %d), want %s", what, i, got[i].ID, got[i].Stream, got[i].Revision, want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
}

// expectWrongRevision checks that err is a wrong expected revision error
// for stream, with the expectation and the actual revision given.
func expectWrongRevision(t *testing.T, err error, stream string, exp eventstore.ExpectedRevision, actual int64) {
	t.Helper()
	if err == nil {
		t.Fatalf("Append(%q, expected %s) succeeded; want a wrong expected revision error (actual %d)", stream, exp, actual)
	}
	if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		t.Fatalf("Append(%q, expected %s): error %v (%T) does not match ErrWrongExpectedRevision", stream, exp, err, err)
	}
	var we *eventstore.WrongExpectedRevisionError
	if !errors.As(err, &we) {
		t.Fatalf("Append(%q, expected %s): error %v (%T) is not a *WrongExpectedRevisionError", stream, exp, err, err)
	}
	if we.Stream != stream || we.Expected != exp || we.Actual != actual {
		t.Fatalf("WrongExpectedRevisionError{Stream %q, Expected %s, Actual %d}, want {%q, %s, %d}", we.Stream, we.Expected, we.Actual, stream, exp, actual)
	}
}

// subscribe starts a subscription that is closed when the test ends.
func subscribe(t *testing.T, ctx context.Context, s eventstore.Store, after uint64) eventstore.Subscription {
	t.Helper()
	sub, err := s.Subscribe(ctx, after)
	if err != nil {
		t.Fatalf("Subscribe(after %d): %v", after, err)
	}
	if sub == nil {
		t.Fatalf("Subscribe(after %d) returned a nil subscription", after)
	}
	t.Cleanup(func() {
		// Bounded: a Close that hangs is reported by the tests that close.
		done := make(chan struct{})
		go func() { sub.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Subscription.Close at cleanup did not return within 10s")
		}
	})
	return sub
}

// next waits for the next message of sub.
func next(t *testing.T, ctx context.Context, sub eventstore.Subscription, what string) eventstore.Message {
	t.Helper()
	select {
	case m, ok := <-sub.Messages():
		if !ok {
			t.Fatalf("subscription ended (Err() = %v) while waiting for %s", sub.Err(), what)
		}
		return m
	case <-ctx.Done():
		t.Fatalf("no message within the deadline while waiting for %s: %v", what, ctx.Err())
	}
	panic("unreachable")
}

// expectEvents waits for want, in order, field by field, with no CaughtUp
// in between.
func expectEvents(t *testing.T, ctx context.Context, sub eventstore.Subscription, want []eventstore.RecordedEvent) {
	t.Helper()
	for i, w := range want {
		what := fmt.Sprintf("event %d of %d (stream %q revision %d, position %d)", i+1, len(want), w.Stream, w.Revision, w.Position)
		m := next(t, ctx, sub, what)
		if m.CaughtUp {
			t.Fatalf("got CaughtUp while waiting for %s", what)
		}
		if d := diffEvent(m.Event, w); d != "" {
			t.Fatalf("subscription delivered the wrong event while waiting for %s: %s", what, d)
		}
	}
}

func expectCaughtUp(t *testing.T, ctx context.Context, sub eventstore.Subscription) {
	t.Helper()
	if m := next(t, ctx, sub, "CaughtUp"); !m.CaughtUp {
		t.Fatalf("got event %s (stream %q revision %d, position %d), want CaughtUp", m.Event.ID, m.Event.Stream, m.Event.Revision, m.Event.Position)
	}
}

// expectEnd waits until Messages is closed, skipping what is still
// buffered, and returns Err().
func expectEnd(t *testing.T, ctx context.Context, sub eventstore.Subscription) error {
	t.Helper()
	for {
		select {
		case _, ok := <-sub.Messages():
			if !ok {
				return sub.Err()
			}
		case <-ctx.Done():
			t.Fatalf("the subscription did not end (Messages not closed) within the deadline")
		}
	}
}

// closeSub calls sub.Close and fails if it does not return.
func closeSub(t *testing.T, ctx context.Context, sub eventstore.Subscription) {
	t.Helper()
	done := make(chan struct{})
	go func() { sub.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("Subscription.Close did not return within the deadline")
	}
}
