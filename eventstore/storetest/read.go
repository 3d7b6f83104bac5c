package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

var readTests = []suiteTest{
	{"ReadStream", testReadStream},
	{"StreamNotFound", testStreamNotFound},
	{"StreamNames", testStreamNames},
	{"ReadAllPaging", testReadAllPaging},
	{"RoundTrip", testRoundTrip},
	{"LargeEvent", testLargeEvent},
}

// testReadStream: forward and backward reads, from a revision, with a
// limit; Limit <= 0 means all; a forward read from beyond the end is empty;
// a backward read from a negative From (FromEnd) starts at the last event.
// Each event equals the one ReadAll returns.
func testReadStream(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	const stream = "read-stream"
	// Ten events in three appends, interleaved with another stream.
	mustAppend(t, ctx, s, stream, eventstore.NoStream, newEvents("r", 4)...)
	mustAppend(t, ctx, s, "read-stream-other", eventstore.NoStream, newEvents("o", 2)...)
	mustAppend(t, ctx, s, stream, eventstore.Exact(3), newEvents("r", 5)...)
	mustAppend(t, ctx, s, "read-stream-other", eventstore.Exact(1), newEvents("o", 1)...)
	last := mustAppend(t, ctx, s, stream, eventstore.Exact(8), newEvents("r", 1)...)
	var all []eventstore.RecordedEvent // the stream as ReadAll sees it
	for _, e := range readLog(t, ctx, s, last.Position, 100) {
		if e.Stream == stream {
			all = append(all, e)
		}
	}
	if len(all) != 10 {
		t.Fatalf("ReadAll holds %d events of %q, want 10", len(all), stream)
	}
	revs := func(first, last int) []eventstore.RecordedEvent { // inclusive; last < first: backward
		var out []eventstore.RecordedEvent
		for r := first; ; {
			out = append(out, all[r])
			if r == last {
				return out
			}
			if last > first {
				r++
			} else {
				r--
			}
		}
	}
	fw, bw := eventstore.Forward, eventstore.Backward
	tests := []struct {
		name string
		opts eventstore.ReadStreamOptions
		want []eventstore.RecordedEvent
	}{
		{"zero options: forward, all", eventstore.ReadStreamOptions{}, revs(0, 9)},
		{"forward from 0, limit 100", eventstore.ReadStreamOptions{Direction: fw, Limit: 100}, revs(0, 9)},
		{"forward from 3", eventstore.ReadStreamOptions{Direction: fw, From: 3}, revs(3, 9)},
		{"forward from 3, limit 4", eventstore.ReadStreamOptions{Direction: fw, From: 3, Limit: 4}, revs(3, 6)},
		{"forward from 0, limit 1", eventstore.ReadStreamOptions{Direction: fw, Limit: 1}, revs(0, 0)},
		{"forward from the last revision", eventstore.ReadStreamOptions{Direction: fw, From: 9}, revs(9, 9)},
		{"forward, negative limit", eventstore.ReadStreamOptions{Direction: fw, From: 8, Limit: -1}, revs(8, 9)},
		{"forward from beyond the end", eventstore.ReadStreamOptions{Direction: fw, From: 10}, nil},
		{"backward from the end", eventstore.ReadStreamOptions{Direction: bw, From: eventstore.FromEnd}, revs(9, 0)},
		{"backward from the end, limit 3", eventstore.ReadStreamOptions{Direction: bw, From: eventstore.FromEnd, Limit: 3}, revs(9, 7)},
		{"backward from the end, limit 1", eventstore.ReadStreamOptions{Direction: bw, From: eventstore.FromEnd, Limit: 1}, revs(9, 9)},
		{"backward from -5 (any negative From)", eventstore.ReadStreamOptions{Direction: bw, From: -5, Limit: 2}, revs(9, 8)},
		{"backward from the last revision", eventstore.ReadStreamOptions{Direction: bw, From: 9}, revs(9, 0)},
		{"backward from 5", eventstore.ReadStreamOptions{Direction: bw, From: 5}, revs(5, 0)},
		{"backward from 5, limit 2", eventstore.ReadStreamOptions{Direction: bw, From: 5, Limit: 2}, revs(5, 4)},
		{"backward from 0", eventstore.ReadStreamOptions{Direction: bw, From: 0}, revs(0, 0)},
		{"backward from 0, limit 5", eventstore.ReadStreamOptions{Direction: bw, From: 0, Limit: 5}, revs(0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readStream(t, ctx, s, stream, tt.opts)
			sameEvents(t, fmt.Sprintf("ReadStream(%+v)", tt.opts), got, tt.want)
		})
	}
}

// testStreamNotFound: reading a stream without events is a
// *StreamNotFoundError naming it, matching ErrStreamNotFound, whatever the
// options; streams are matched exactly, not by prefix or pattern.
func testStreamNotFound(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	expectStreamMissing(t, ctx, s, "nobody-wrote-here")
	mustAppend(t, ctx, s, "session-1", eventstore.NoStream, newEvents("x", 2)...)
	for _, stream := range []string{"session-", "session-10", "session-%", "session-_", "Session-1", "session-1 "} {
		for _, opts := range []eventstore.ReadStreamOptions{{}, {Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1}} {
			evs, err := s.ReadStream(ctx, stream, opts)
			if !isNotFound(err, stream) {
				t.Errorf("ReadStream(%q, %+v) = %d events, %v; want a *StreamNotFoundError naming it", stream, opts, len(evs), err)
			}
		}
	}
}

func isNotFound(err error, stream string) bool {
	var nf *eventstore.StreamNotFoundError
	return errors.Is(err, eventstore.ErrStreamNotFound) && errors.As(err, &nf) && nf.Stream == stream
}

// testStreamNames: every valid name works and is matched exactly, byte for
// byte: case, trailing spaces, SQL wildcards and quotes, non-ASCII text,
// the longest name allowed.
func testStreamNames(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	names := []string{
		"a", "A", "a ", " a", "a%", "a_", "a\\", "a'b", `a"b`, "a'; DROP TABLE events; --",
		"with/slash", "tab\tand\nnewline", "ünïcödé-流-🙂", "a$", "session-" + uuid.NewString(),
		strings.Repeat("n", eventstore.MaxStreamNameLength),
		strings.Repeat("é", eventstore.MaxStreamNameLength/2),
	}
	ids := make(map[string]uuid.UUID, len(names))
	var last eventstore.AppendResult
	for _, name := range names {
		evs := newEvents("names", 1)
		res, err := s.Append(ctx, name, eventstore.NoStream, evs...)
		if err != nil {
			t.Fatalf("Append(%q, NoStream) (every name is distinct): %v", name, err)
		}
		ids[name] = evs[0].ID
		last = res
	}
	for _, name := range names {
		got := readStream(t, ctx, s, name, eventstore.ReadStreamOptions{})
		if len(got) != 1 || got[0].ID != ids[name] || got[0].Stream != name {
			t.Errorf("ReadStream(%q) = %d events (first: stream %q), want exactly its one event", name, len(got), firstStream(got))
		}
	}
	if log := readLog(t, ctx, s, last.Position, 100); len(log) != len(names) {
		t.Errorf("log holds %d events, want %d", len(log), len(names))
	}
}

func firstStream(evs []eventstore.RecordedEvent) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[0].Stream
}

// testReadAllPaging: paging with any limit, from any position (also one
// between two events' positions, and beyond the end), gives the same log.
func testReadAllPaging(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	var want []uuid.UUID
	var last eventstore.AppendResult
	for i := range 12 {
		evs := newEvents("page", 1+i%3)
		last = mustAppend(t, ctx, s, fmt.Sprintf("page-%d", i%4), eventstore.Any, evs...)
		want = append(want, idsOf(evs)...)
	}
	log := readLog(t, ctx, s, last.Position, len(want)+10)
	sameIDs(t, "ReadAll in one page", log, want)
	checkLog(t, h.opts, log)
	for _, limit := range []int{1, 2, 3, 7, len(want) - 1, len(want)} {
		sameEvents(t, fmt.Sprintf("ReadAll in pages of %d", limit), readLog(t, ctx, s, last.Position, limit), log)
	}
	for k := range len(log) - 1 {
		for _, after := range []uint64{log[k].Position, log[k+1].Position - 1} {
			got, err := s.ReadAll(ctx, after, 3)
			if err != nil {
				t.Fatalf("ReadAll(after %d, 3): %v", after, err)
			}
			if len(got) == 0 || got[0].ID != log[k+1].ID {
				t.Fatalf("ReadAll(after %d, 3) starts with %v, want event %d at position %d", after, positions(got), k+1, log[k+1].Position)
			}
		}
	}
	for _, after := range []uint64{log[len(log)-1].Position, log[len(log)-1].Position + 1, math.MaxUint64} {
		got, err := s.ReadAll(ctx, after, 10)
		if err != nil || len(got) != 0 {
			t.Errorf("ReadAll(after %d) beyond the end = %v, %v; want no events and no error", after, positions(got), err)
		}
	}
}

func positions(evs []eventstore.RecordedEvent) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Position
	}
	return out
}

// trickyJSON is valid JSON that a store normalising data would change:
// whitespace, key order, a duplicate key, number forms, escapes (\u0000
// too), non-ASCII text. Data is stored byte-exact.
const trickyJSON = "{\"z\": 1,  \"a\": [1, 2.50, 1e3, -0, 12345678901234567890123],\n\t\"s\": \"\\u00e9\\u0000<>&\\\"\\/\", \"k\": \"ünï 流\", \"k\": null, \"o\": {}}"

// testRoundTrip: an event reads back as written, through ReadStream,
// ReadAll and Subscribe alike: id, stream, type, version, data byte-exact,
// every metadata field; recorded_at in UTC near the time of the append.
// Version 0 reads back as 1 and empty data as {}, as Prepare normalises.
func testRoundTrip(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	const stream = "round-trip"
	in := []eventstore.EventData{
		{ID: eventstore.NewEventID(), Type: "storetest.round-trip", Version: 3, Data: json.RawMessage(trickyJSON), Metadata: fullMetadata(t, "ä-")},
		{ID: eventstore.NewEventID(), Type: "storetest.defaults", Version: 0, Data: nil},
		{ID: eventstore.NewEventID(), Type: strings.Repeat("t", eventstore.MaxTypeLength), Version: 1, Data: json.RawMessage(`[]`), Metadata: eventstore.Metadata{ClientIP: "2001:db8::1"}},
		{ID: eventstore.NewEventID(), Type: "x", Version: math.MaxInt32, Data: json.RawMessage(`"text"`)},
		{ID: eventstore.NewEventID(), Type: "storetest.scalars", Version: 1, Data: json.RawMessage(`null`)},
		{ID: eventstore.NewEventID(), Type: "storetest.scalars", Version: 1, Data: json.RawMessage(`-12.5e-3`)},
	}
	start := time.Now()
	res := mustAppend(t, ctx, s, stream, eventstore.NoStream, in...)
	end := time.Now()

	got := readStream(t, ctx, s, stream, eventstore.ReadStreamOptions{})
	if len(got) != len(in) {
		t.Fatalf("ReadStream returned %d events, want %d", len(got), len(in))
	}
	for i, e := range got {
		want := eventstore.RecordedEvent{
			ID: in[i].ID, Stream: stream, Type: in[i].Type, Version: max(in[i].Version, 1),
			Revision: int64(i), Position: e.Position, RecordedAt: e.RecordedAt,
			Data: in[i].Data, Metadata: in[i].Metadata,
		}
		if len(want.Data) == 0 {
			want.Data = json.RawMessage(`{}`)
		}
		if d := diffEvent(e, want); d != "" {
			t.Errorf("event %d reads back changed: %s", i, d)
		}
		checkRecordedAt(t, e, start, end)
	}
	if last := got[len(got)-1]; res.Position != last.Position {
		t.Errorf("AppendResult.Position = %d, want %d", res.Position, last.Position)
	}
	if !got[0].RecordedAt.Equal(got[len(got)-1].RecordedAt) {
		// Not required, only a hint: one append is one commit.
		t.Logf("note: the events of one append have different recorded_at (%s, %s)", got[0].RecordedAt, got[len(got)-1].RecordedAt)
	}

	sameEvents(t, "ReadAll against ReadStream", readLog(t, ctx, s, res.Position, 100), got)
	back := readStream(t, ctx, s, stream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd})
	for i, e := range back {
		if d := diffEvent(e, got[len(got)-1-i]); d != "" {
			t.Errorf("backward read, event %d: %s", i, d)
		}
	}
	sub := subscribe(t, ctx, s, 0)
	expectEvents(t, ctx, sub, got)
	expectCaughtUp(t, ctx, sub)
}

// fullMetadata sets every field of Metadata to a distinct value, so a field
// added later is covered without editing the suite.
func fullMetadata(t *testing.T, prefix string) eventstore.Metadata {
	t.Helper()
	var md eventstore.Metadata
	v := reflect.ValueOf(&md).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.String {
			t.Fatalf("storetest: Metadata.%s is a %s; teach fullMetadata to fill it", v.Type().Field(i).Name, f.Kind())
		}
		f.SetString(fmt.Sprintf("%s%s-%d \"q\" \\ 流", prefix, v.Type().Field(i).Name, i))
	}
	return md
}

// checkRecordedAt: UTC, and between the start and the end of the append,
// with slack for a database clock and its precision.
func checkRecordedAt(t *testing.T, e eventstore.RecordedEvent, start, end time.Time) {
	t.Helper()
	const slack = 10 * time.Second
	if e.RecordedAt.Location() != time.UTC {
		t.Errorf("event %d: recorded_at %s is in location %q, want UTC (convert with .UTC())", e.Revision, e.RecordedAt, e.RecordedAt.Location())
	}
	if e.RecordedAt.Before(start.Add(-slack)) || e.RecordedAt.After(end.Add(slack)) {
		t.Errorf("event %d: recorded_at %s is not within %s of the append (%s .. %s)", e.Revision, e.RecordedAt, slack, start.UTC(), end.UTC())
	}
}

// testLargeEvent: a 1 MiB event reads back byte-exact, and an event of
// exactly the size limit (data plus encoded metadata) is accepted.
func testLargeEvent(t *testing.T, h *harness) {
	ctx := h.context(t)
	s := h.store(t, ctx)
	rng := rand.New(rand.NewPCG(1, 2))
	blob := func(size int) json.RawMessage {
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_+*/()[]{}<>=!?@#$%^&|~`'"
		head, tail := `{"blob":"`, `"}`
		b := make([]byte, 0, size)
		b = append(b, head...)
		for len(b) < size-len(tail) {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		return append(b, tail...)
	}
	md := fullMetadata(t, "large-")
	big := eventstore.EventData{ID: eventstore.NewEventID(), Type: "storetest.large", Version: 2, Data: blob(1 << 20), Metadata: md}
	mdJSON, err := json.Marshal(eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	limit := eventstore.EventData{ID: eventstore.NewEventID(), Type: "storetest.limit", Version: 1, Data: blob(eventstore.DefaultMaxEventSize - len(mdJSON))}

	start := time.Now()
	mustAppend(t, ctx, s, "large", eventstore.NoStream, big)
	end := time.Now()
	atLimit, err := s.Append(ctx, "large-limit", eventstore.NoStream, limit)
	if err != nil {
		t.Fatalf("Append of an event of exactly DefaultMaxEventSize bytes (data plus metadata): %v", err)
	}

	for _, w := range []struct {
		stream string
		in     eventstore.EventData
	}{{"large", big}, {"large-limit", limit}} {
		got := readStream(t, ctx, s, w.stream, eventstore.ReadStreamOptions{})
		if len(got) != 1 {
			t.Fatalf("ReadStream(%q) = %d events, want 1", w.stream, len(got))
		}
		want := eventstore.RecordedEvent{
			ID: w.in.ID, Stream: w.stream, Type: w.in.Type, Version: w.in.Version,
			Position: got[0].Position, RecordedAt: got[0].RecordedAt, Data: w.in.Data, Metadata: w.in.Metadata,
		}
		if d := diffEvent(got[0], want); d != "" {
			t.Errorf("%s reads back changed: %s", w.stream, d)
		}
	}
	got := readStream(t, ctx, s, "large", eventstore.ReadStreamOptions{})
	checkRecordedAt(t, got[0], start, end)
	log := readLog(t, ctx, s, atLimit.Position, 1)
	if len(log) != 2 || string(log[0].Data) != string(big.Data) || string(log[1].Data) != string(limit.Data) {
		t.Errorf("ReadAll does not return the large events byte-exact")
	}
}
