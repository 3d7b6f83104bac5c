package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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
// Within tailTrust of the last commit, a read that reaches the end of the
// run is complete (the database holds nothing newer), and a read at the
// end is answered with nothing; after it, both go to the database.
func TestTailServesOnlyWhatItHolds(t *testing.T) {
	t.Parallel()
	type read struct {
		after uint64
		limit int
		want  []uint64 // nil: not served from the run
		end   bool     // the read reaches the end of the run (or starts there)
	}
	tests := []struct {
		name    string
		size    int
		batches [][]eventstore.RecordedEvent
		reads   []read
	}{
		{"empty", 4, nil, []read{{0, 10, nil, false}}},
		{"one run", 8, [][]eventstore.RecordedEvent{recorded(1, 3, 1), recorded(4, 5, 1)}, []read{
			{0, 10, span(1, 5), true}, {2, 10, span(3, 5), true}, {2, 2, span(3, 4), false}, {4, 10, span(5, 5), true},
			{5, 10, nil, true}, // at the end: nothing newer, unless another process wrote since
			{6, 10, nil, false},
		}},
		{"wraps and drops the oldest", 4, [][]eventstore.RecordedEvent{recorded(10, 12, 1), recorded(13, 15, 1)}, []read{
			{10, 10, nil, false}, {11, 10, span(12, 15), true}, {13, 1, span(14, 14), false},
		}},
		{"a batch larger than the ring", 3, [][]eventstore.RecordedEvent{recorded(1, 2, 1), recorded(3, 9, 1)}, []read{
			{5, 10, nil, false}, {6, 10, span(7, 9), true},
		}},
		{"a gap starts a new run", 8, [][]eventstore.RecordedEvent{recorded(1, 3, 1), recorded(7, 8, 1)}, []read{
			{0, 10, nil, false}, {3, 10, nil, false}, {6, 10, span(7, 8), true},
		}},
		{"the byte bound drops the oldest", 8, [][]eventstore.RecordedEvent{recorded(1, 3, maxTailBytes/3), recorded(4, 4, maxTailBytes/2)}, []read{
			{1, 10, nil, false}, {2, 10, span(3, 4), true},
		}},
		{"an event over the bound is not kept", 8, [][]eventstore.RecordedEvent{recorded(1, 2, 1), recorded(3, 3, maxTailBytes+1), recorded(4, 5, 1)}, []read{
			{0, 10, nil, false}, {2, 10, nil, false}, {3, 10, span(4, 5), true},
		}},
	}
	for _, tt := range tests {
		for _, fresh := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fresh=%v", tt.name, fresh), func(t *testing.T) {
				t.Parallel()
				tl := newTail(tt.size)
				for _, b := range tt.batches {
					tl.add(b)
				}
				// Fresh: an hour, not tailTrust, so that a test paused for
				// a moment on a loaded machine still reads within it.
				tl.trust = time.Hour
				if !fresh {
					tl.trust = 0
				}
				for _, r := range tt.reads {
					got, ok, complete := tl.read(r.after, r.limit)
					wantOK, wantComplete := r.want != nil, false
					if fresh && r.end {
						wantOK, wantComplete = true, true
					}
					if ok != wantOK || complete != wantComplete || !reflect.DeepEqual(positions(got), r.want) {
						t.Errorf("read(%d, %d) = %v, ok %v, complete %v; want %v, ok %v, complete %v",
							r.after, r.limit, positions(got), ok, complete, r.want, wantOK, wantComplete)
					}
				}
			})
		}
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
	first, _, _ := tl.read(0, 10)
	for i := range first {
		if cap(first[i].Data) != len(first[i].Data) {
			t.Fatalf("event %d: data of length %d and capacity %d", i, len(first[i].Data), cap(first[i].Data))
		}
		first[i].Data = append(first[i].Data, '!')
	}
	again, _, _ := tl.read(0, 10)
	if string(again[0].Data) != `{"a":1}` || string(again[1].Data) != `{"b":2}` {
		t.Fatalf("a reader's appends leaked: %s %s", again[0].Data, again[1].Data)
	}
}

// ReadAll served from the tail returns exactly what the database returns:
// a store without a tail on the same file is the reference, through
// multi-event appends, metadata or none, refused appends (a duplicate id
// rolled back half-way) and retries, and appends made by another store
// on the file in between (another process), whose events only the
// database has. Reads that reach the end of the tail right after a commit
// of s are answered from memory alone: they must match too. Another
// store's appends become visible once s commits again or its trust in
// the tail runs out (TestTailSeesAnotherStoreWithinTrust); here the test
// ends that trust at once.
func TestTailMatchesTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, other := storeAndOtherProcess(t)
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
			distrust(s.tail)
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

// distrust makes the tail ask the database about what follows its run, as
// it does once tailTrust has passed since the last commit.
func distrust(tl *tail) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.confirmed = time.Time{}
}

// Within tailTrust of its last commit, a store answers reads at the head
// from memory, without the database; another store's appends to the file
// become visible at once when the store commits again (its next batch does
// not follow its run), and otherwise once the trust runs out.
func TestTailSeesAnotherStoreWithinTrust(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, other := storeAndOtherProcess(t)
	s.tail.trust = time.Hour
	mustAppend(t, s, "a", eventstore.Any, event("x", 1), event("x", 2))

	before := s.databaseReads.Load()
	for after := range uint64(3) {
		got, err := s.ReadAll(ctx, after, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := span(after+1, 2); !reflect.DeepEqual(positions(got), want) {
			t.Fatalf("ReadAll(%d) = %v, want %v", after, positions(got), want)
		}
	}
	if n := s.databaseReads.Load() - before; n != 0 {
		t.Fatalf("reads of the head right after a commit went to the database %d times", n)
	}

	// Another process appends: within the trust, s does not see it yet...
	mustAppend(t, other, "b", eventstore.Any, event("o", 3))
	if got, err := s.ReadAll(ctx, 2, 10); err != nil || len(got) != 0 {
		t.Fatalf("ReadAll(2) within the trust = %v, %v; want nothing (from memory)", positions(got), err)
	}
	// ...and once the trust has run out, it asks the database.
	distrust(s.tail)
	if got, err := s.ReadAll(ctx, 2, 10); err != nil || !reflect.DeepEqual(positions(got), span(3, 3)) {
		t.Fatalf("ReadAll(2) after the trust = %v, %v; want [3]", positions(got), err)
	}

	// Another append by each: s's commit restarts its run after the other
	// store's event, so a reader behind it goes to the database at once.
	s.tail.trust = time.Hour
	mustAppend(t, other, "b", eventstore.Any, event("o", 4))
	mustAppend(t, s, "a", eventstore.Any, event("x", 5))
	got, err := s.ReadAll(ctx, 3, 10)
	if err != nil || !reflect.DeepEqual(positions(got), span(4, 5)) {
		t.Fatalf("ReadAll(3) after both appended = %v, %v; want [4 5]", positions(got), err)
	}
	if n := s.databaseReads.Load() - before; n == 0 {
		t.Fatal("no read went to the database: the test tests nothing")
	}
}

// storeAndOtherProcess opens two stores on one new file: s with a tail of
// 64 events, and other without one (the database's answers, and appends
// s's writer does not make, as another process's would be).
func storeAndOtherProcess(t *testing.T) (s, other *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cairn.db")
	s = openStoreAt(t, path, Options{TailEvents: 64})
	other = openStoreAt(t, path, Options{TailEvents: -1})
	if other.tail != nil {
		t.Fatal("TailEvents -1 made a tail")
	}
	return s, other
}
