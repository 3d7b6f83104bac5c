package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// recorded builds events at positions from..to with data of size bytes.
func recorded(from, to uint64, size int) []eventstore.RecordedEvent {
	var out []eventstore.RecordedEvent
	for p := from; p <= to; p++ {
		out = append(out, eventstore.RecordedEvent{Position: p, Data: []byte(strings.Repeat("x", size))})
	}
	return out
}

func positions(evs []eventstore.RecordedEvent) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.Position)
	}
	return out
}

func span(from, to uint64) []uint64 {
	var out []uint64
	for p := from; p <= to; p++ {
		out = append(out, p)
	}
	return out
}

// The tail answers exactly the reads its contiguous run covers from the
// read's first position on, and leaves every other one to the database.
func TestTailServesOnlyWhatItHolds(t *testing.T) {
	t.Parallel()
	type read struct {
		after uint64
		limit int
		want  []uint64 // nil: not served (ok false)
	}
	tests := []struct {
		name    string
		size    int
		batches [][]eventstore.RecordedEvent
		reads   []read
	}{
		{"empty", 4, nil, []read{{0, 10, nil}}},
		{"one run", 8, [][]eventstore.RecordedEvent{recorded(1, 3, 1), recorded(4, 5, 1)}, []read{
			{0, 10, span(1, 5)}, {2, 10, span(3, 5)}, {2, 2, span(3, 4)}, {4, 10, span(5, 5)},
			{5, 10, nil}, // at the end: newer events may exist (another process)
		}},
		{"wraps and drops the oldest", 4, [][]eventstore.RecordedEvent{recorded(10, 12, 1), recorded(13, 15, 1)}, []read{
			{10, 10, nil}, {11, 10, span(12, 15)}, {13, 1, span(14, 14)},
		}},
		{"a batch larger than the ring", 3, [][]eventstore.RecordedEvent{recorded(1, 2, 1), recorded(3, 9, 1)}, []read{
			{5, 10, nil}, {6, 10, span(7, 9)},
		}},
		{"a gap starts a new run", 8, [][]eventstore.RecordedEvent{recorded(1, 3, 1), recorded(7, 8, 1)}, []read{
			{0, 10, nil}, {3, 10, nil}, {6, 10, span(7, 8)},
		}},
		{"the byte bound drops the oldest", 8, [][]eventstore.RecordedEvent{recorded(1, 3, maxTailBytes/3), recorded(4, 4, maxTailBytes/2)}, []read{
			{1, 10, nil}, {2, 10, span(3, 4)},
		}},
		{"an event over the bound is not kept", 8, [][]eventstore.RecordedEvent{recorded(1, 2, 1), recorded(3, 3, maxTailBytes+1), recorded(4, 5, 1)}, []read{
			{0, 10, nil}, {2, 10, nil}, {3, 10, span(4, 5)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tl := newTail(tt.size)
			for _, b := range tt.batches {
				tl.add(b)
			}
			for _, r := range tt.reads {
				got, ok := tl.read(r.after, r.limit)
				if ok != (r.want != nil) || !reflect.DeepEqual(positions(got), r.want) {
					t.Errorf("read(%d, %d) = %v, %v; want %v", r.after, r.limit, positions(got), ok, r.want)
				}
			}
		})
	}
	if newTail(0) != nil || newTail(-1) != nil {
		t.Error("a tail of no events was made")
	}
}

// What ReadAll returns shares its data with the tail (read-only, see
// eventstore.Store.ReadAll), capped: a reader appending to an event's data
// gets a copy and does not change what the next reader gets.
func TestTailReadsShareCappedData(t *testing.T) {
	t.Parallel()
	tl := newTail(4)
	// The writer adds its own copies, each capped (newAppendPart).
	buf := []byte(`{"a":1}{"b":2}`)
	tl.add([]eventstore.RecordedEvent{{Position: 1, Data: buf[0:7:7]}, {Position: 2, Data: buf[7:14:14]}})
	first, _ := tl.read(0, 10)
	for i := range first {
		if cap(first[i].Data) != len(first[i].Data) {
			t.Fatalf("event %d: data of length %d and capacity %d", i, len(first[i].Data), cap(first[i].Data))
		}
		first[i].Data = append(first[i].Data, '!')
	}
	again, _ := tl.read(0, 10)
	if string(again[0].Data) != `{"a":1}` || string(again[1].Data) != `{"b":2}` {
		t.Fatalf("a reader's appends leaked: %s %s", again[0].Data, again[1].Data)
	}
}

// ReadAll served from the tail returns exactly what the database returns:
// a store without a tail on the same file is the reference, through
// multi-event appends, metadata or none, refused appends (a duplicate id
// rolled back half-way) and retries, and appends made by another store
// on the file in between (another process), whose events only the
// database has.
func TestTailMatchesTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	s := openStoreAt(t, path, Options{TailEvents: 64})
	other := openStoreAt(t, path, Options{TailEvents: -1})
	if other.tail != nil {
		t.Fatal("TailEvents -1 made a tail")
	}
	withMD := func(ev eventstore.EventData, i int) eventstore.EventData {
		if i%2 == 0 {
			ev.Metadata = eventstore.Metadata{Actor: fmt.Sprintf("u%d", i), RequestID: "r", ClientIP: "127.0.0.1"}
		}
		return ev
	}
	var buf []byte
	for i := range 40 {
		stream := fmt.Sprintf("s-%d", i%3)
		switch i % 5 {
		case 0: // three events, the second one's data in a reused buffer
			buf = append(buf[:0], fmt.Sprintf(`{"i":%d}`, i)...)
			evs := []eventstore.EventData{withMD(event("x", i), i), event("y", i), withMD(event("z", i), i+1)}
			evs[1].Data = buf
			mustAppend(t, s, stream, eventstore.Any, evs...)
			copy(buf, `{"j"`) // the caller reuses its buffer
		case 1: // a duplicate id in the middle: refused, nothing kept
			dup := event("x", i)
			mustAppend(t, s, "dups", eventstore.Any, dup)
			_, err := s.Append(ctx, stream, eventstore.Any, event("x", i), dup)
			var de *eventstore.DuplicateEventError
			if !errors.As(err, &de) {
				t.Fatalf("append with a stored id: %v", err)
			}
		case 2: // another process appends to the same file
			mustAppend(t, other, stream, eventstore.Any, withMD(event("o", i), i))
		case 3: // a retry: the same events again, nothing new
			ev := withMD(event("r", i), i)
			mustAppend(t, s, stream, eventstore.Any, ev)
			mustAppend(t, s, stream, eventstore.Any, ev)
		default:
			mustAppend(t, s, stream, eventstore.Any, withMD(event("w", i), i))
		}
		// Every reader position, every page size, both ways.
		want := readAllEvents(t, other)
		for after := range uint64(len(want)) {
			for _, limit := range []int{1, 3, 1000} {
				got, err := s.ReadAll(ctx, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := other.ReadAll(ctx, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 && len(ref) == 0 {
					continue
				}
				if !reflect.DeepEqual(got, ref) {
					t.Fatalf("step %d, ReadAll(%d, %d):\n got %+v\nwant %+v", i, after, limit, got, ref)
				}
			}
		}
	}
	if s.tail.n == 0 {
		t.Fatal("the tail kept nothing: the test tests nothing")
	}
}
