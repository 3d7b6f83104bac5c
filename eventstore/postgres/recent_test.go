package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// fakeLog is a server's $all with sparse positions (10, 20, 30...) below a
// horizon the test moves; it counts the queries.
type fakeLog struct {
	mu      sync.Mutex
	events  []eventstore.RecordedEvent
	horizon uint64
	queries int
}

func (f *fakeLog) add(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		p := uint64(len(f.events)+1) * 10
		f.events = append(f.events, eventstore.RecordedEvent{Position: p, Data: []byte(fmt.Sprint(p))})
	}
	f.horizon = uint64(len(f.events))*10 + 1
}

func (f *fakeLog) query(_ context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	var out []eventstore.RecordedEvent
	for _, ev := range f.events {
		if ev.Position > after && ev.Position < f.horizon && len(out) < limit {
			ev.Data = slices.Clone(ev.Data)
			out = append(out, ev)
		}
	}
	return out, nil
}

func positions(evs []eventstore.RecordedEvent) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.Position)
	}
	return out
}

// TestRecentServesTheHead: readers of the head share one query and get
// what the server would answer.
func TestRecentServesTheHead(t *testing.T) {
	ctx := context.Background()
	f := &fakeLog{}
	r := newRecent(5)
	f.add(3)
	got, _ := r.readAll(ctx, 0, 100, f.query)
	if !slices.Equal(positions(got), []uint64{10, 20, 30}) || f.queries != 1 {
		t.Fatalf("first read %v after %d queries", positions(got), f.queries)
	}
	// A read from inside the run with enough held: no query.
	got, _ = r.readAll(ctx, 10, 2, f.query)
	if !slices.Equal(positions(got), []uint64{20, 30}) || f.queries != 1 || string(got[0].Data) != "20" {
		t.Fatalf("read after 10: %v (%q) after %d queries", positions(got), got[0].Data, f.queries)
	}

	// Reading past the run asks the server for what follows it only.
	f.add(2)
	got, _ = r.readAll(ctx, 20, 100, f.query)
	if !slices.Equal(positions(got), []uint64{30, 40, 50}) || f.queries != 2 {
		t.Fatalf("read after 20: %v after %d queries", positions(got), f.queries)
	}

	// The run keeps the 5 latest; an older read goes to the server and
	// leaves the run alone.
	f.add(3) // 60, 70, 80
	if got, _ = r.readAll(ctx, 50, 100, f.query); !slices.Equal(positions(got), []uint64{60, 70, 80}) {
		t.Fatalf("read after 50: %v", positions(got))
	}
	q := f.queries
	if got, _ = r.readAll(ctx, 10, 2, f.query); !slices.Equal(positions(got), []uint64{20, 30}) || f.queries != q+1 {
		t.Fatalf("old read: %v after %d queries (want %d)", positions(got), f.queries, q+1)
	}
	if got, _ = r.readAll(ctx, 40, 3, f.query); !slices.Equal(positions(got), []uint64{50, 60, 70}) || f.queries != q+1 {
		t.Fatalf("read of the run: %v after %d queries (want %d)", positions(got), f.queries, q+1)
	}

	// A reader ahead of the run starts a new one.
	f.add(2) // 90, 100
	if got, _ = r.readAll(ctx, 90, 100, f.query); !slices.Equal(positions(got), []uint64{100}) {
		t.Fatalf("read after 90: %v", positions(got))
	}
	if got, _ = r.readAll(ctx, 70, 100, f.query); !slices.Equal(positions(got), []uint64{80, 90, 100}) {
		t.Fatalf("read after 70: %v", positions(got))
	}
}

// TestRecentConcurrentReaders: readers following the head while the log
// grows each see every event once, in order, like the server's answers.
func TestRecentConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	f := &fakeLog{}
	r := newRecent(64)
	const total = 3000
	var wg sync.WaitGroup
	results := make([][]uint64, 8)
	for k := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var after uint64
			for len(results[k]) < total {
				evs, err := r.readAll(ctx, after, 1+k*7, f.query)
				if err != nil {
					t.Error(err)
					return
				}
				for _, ev := range evs {
					if string(ev.Data) != fmt.Sprint(ev.Position) {
						t.Errorf("reader %d: event %d holds %q", k, ev.Position, ev.Data)
						return
					}
					results[k] = append(results[k], ev.Position)
					after = ev.Position
				}
			}
		}()
	}
	for added := 0; added < total; added += 7 {
		f.add(min(7, total-added))
	}
	wg.Wait()
	want := make([]uint64, total)
	for i := range want {
		want[i] = uint64(i+1) * 10
	}
	for k, got := range results {
		if !slices.Equal(got, want) {
			t.Fatalf("reader %d saw %d events, not the log in order", k, len(got))
		}
	}
}
