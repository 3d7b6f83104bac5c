package postgres

import (
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairnhq/cairn/eventstore"
)

// maxRecentBytes bounds the data the recent run holds: the oldest events
// leave first, and an event larger than the whole bound ends the run.
const maxRecentBytes = 32 << 20

// recent is a read-through cache of the head of $all, shared by the
// Store's subscriptions. Every projector and process manager of a server
// follows the head by polling ReadAll, woken by the same notifications:
// without it, each would read and decode the same rows (the audit trail's
// batches are hundreds of kilobytes) from the server.
//
// It holds one run of the log: every event with a position in (from, to],
// as ReadAll returned them. The horizon makes that final (see the package
// documentation): no event can appear later at a position a read has
// already passed, so a run read once is the truth for every later reader.
//
// Reads of the head go through fetch, one at a time: the first reader
// queries the server and extends the run, the others find it there. A
// reader also skips the server when a query that began after its call
// started came back short of its limit: that query saw the log as of a
// moment after the reader asked, which is all the reader could have seen.
// Older reads (a projector catching up from far behind) go straight to
// the server and leave the run alone.
type recent struct {
	max int // most events held

	mu     sync.Mutex
	from   uint64
	to     uint64
	events []eventstore.RecordedEvent
	bytes  int

	fetch sync.Mutex
	// begun counts the queries of the head begun; caughtUp is the number
	// of the last one that came back short (it reached the horizon).
	begun    atomic.Uint64
	caughtUp atomic.Uint64
}

func newRecent(size int) *recent {
	if size <= 0 {
		return nil
	}
	return &recent{max: size}
}

// query reads from the server: up to limit events after a position.
type query func(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error)

// readAll answers ReadAll(after, limit) from the run and, for what it does
// not hold, from the server through q.
func (r *recent) readAll(ctx context.Context, after uint64, limit int, q query) ([]eventstore.RecordedEvent, error) {
	asked := r.begun.Load()
	events, _, ok := r.serve(after, limit)
	if ok && len(events) == limit {
		return events, nil
	}
	if !ok && r.behind(after) {
		return q(ctx, after, limit)
	}
	r.fetch.Lock()
	defer r.fetch.Unlock()
	// Another reader may have fetched while this one waited: serve again.
	events, next, ok := r.serve(after, limit)
	switch {
	case ok && len(events) == limit:
		return events, nil
	case ok && r.caughtUp.Load() > asked:
		return events, nil
	case !ok:
		next = after
	}
	n := r.begun.Add(1)
	more, err := q(ctx, next, limit-len(events))
	if err != nil {
		return nil, err
	}
	r.add(next, more)
	if len(more) < limit-len(events) {
		r.caughtUp.Store(n)
	}
	return append(events, more...), nil
}

// behind reports whether position after is before the run: a read of old
// history.
func (r *recent) behind(after uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events) > 0 && after < r.from
}

// serve returns up to limit events after position after from the run
// (their data shared, read-only: see eventstore.Store.ReadAll), ok when
// the run covers after; next is where the server must be asked for more
// (the run's end).
func (r *recent) serve(after uint64, limit int) (events []eventstore.RecordedEvent, next uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if after < r.from || after > r.to || r.to == 0 {
		return nil, 0, false
	}
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].Position > after })
	return slices.Clone(r.events[i:min(len(r.events), i+limit)]), r.to, true
}

// forget empties the run, keeping where it ends: events changed on the
// server (a prune) are read from it again.
func (r *recent) forget() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.events)
	r.events, r.bytes, r.from = r.events[:0], 0, r.to
}

// add records that the server holds exactly events after position after,
// up to the last of them.
func (r *recent) add(after uint64, events []eventstore.RecordedEvent) {
	if len(events) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.to == 0 || after < r.from || after > r.to {
		// Not the continuation of the run: start a new one.
		clear(r.events)
		r.events, r.bytes, r.from, r.to = r.events[:0], 0, after, after
	}
	for _, ev := range events {
		if ev.Position <= r.to {
			continue // already held
		}
		if len(ev.Data) > maxRecentBytes {
			clear(r.events)
			r.events, r.bytes, r.from = r.events[:0], 0, ev.Position
			r.to = ev.Position
			continue
		}
		r.events = append(r.events, ev)
		r.bytes += len(ev.Data)
		r.to = ev.Position
	}
	// Drop the oldest beyond the bounds.
	drop := 0
	for len(r.events)-drop > r.max || (r.bytes > maxRecentBytes && drop < len(r.events)) {
		r.bytes -= len(r.events[drop].Data)
		r.from = r.events[drop].Position
		drop++
	}
	if drop > 0 {
		n := copy(r.events, r.events[drop:])
		clear(r.events[n:])
		r.events = r.events[:n]
	}
}
