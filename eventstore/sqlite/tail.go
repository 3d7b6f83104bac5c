package sqlite

import (
	"sync"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// DefaultTailEvents is how many of the latest events a Store keeps in
// memory for ReadAll (Options.TailEvents).
const DefaultTailEvents = 8192

// tailTrust is how long after this store's last commit the tail answers
// that nothing follows its run without asking the database. Only another
// Store on the file (another process) can have written after it, and the
// subscriptions poll the database for that anyway (eventstore.PollOptions
// Interval, 250ms by default): its events reach this store's readers
// within tailTrust of their commit, as they did within a poll interval.
const tailTrust = 250 * time.Millisecond

// maxTailBytes bounds the data the tail holds: the oldest events leave
// first, and an event larger than the whole bound is never kept.
const maxTailBytes = 32 << 20

// tail keeps the events this store's writer committed last, in position
// order, so that the subscriptions following the head of the log (every
// projector and process manager of a server polls ReadAll after each
// commit) read them from memory instead of each running the query and
// decoding the same rows again.
//
// It only ever holds a contiguous run of positions, exactly as committed:
// the writer adds a batch after its COMMIT and before it answers the
// appends, and a batch that does not follow the last one (another process
// wrote to the file in between) starts a new run. A read the run does not
// cover from its first position on goes to the database.
type tail struct {
	mu sync.RWMutex
	// ring holds n events from index start (wrapping); the oldest has
	// position first, and the run ends before position first+n.
	ring  []eventstore.RecordedEvent
	start int
	n     int
	first uint64
	bytes int
	// confirmed is when the writer last committed: the database's log
	// ended where the run ends. trust is tailTrust (tests change it).
	confirmed time.Time
	trust     time.Duration
}

func newTail(size int) *tail {
	if size <= 0 {
		return nil
	}
	return &tail{ring: make([]eventstore.RecordedEvent, size), trust: tailTrust}
}

// add appends events just committed, positions consecutive: the last one
// ends the log as of the commit.
func (t *tail) add(events []eventstore.RecordedEvent) {
	if t == nil || len(events) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.confirmed = time.Now()
	if events[0].Position != t.first+uint64(t.n) {
		t.restart(events[0].Position)
	}
	for _, ev := range events {
		if len(ev.Data) > maxTailBytes {
			t.restart(ev.Position + 1)
			continue
		}
		for t.n == len(t.ring) || (t.n > 0 && t.bytes+len(ev.Data) > maxTailBytes) {
			t.bytes -= len(t.ring[t.start].Data)
			t.ring[t.start] = eventstore.RecordedEvent{}
			t.start = (t.start + 1) % len(t.ring)
			t.n--
			t.first++
		}
		t.ring[(t.start+t.n)%len(t.ring)] = ev
		t.n++
		t.bytes += len(ev.Data)
	}
}

// forget empties the run, keeping where it ends: events changed in the
// database (a prune) are read from it again.
func (t *tail) forget() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.restart(t.first + uint64(t.n))
}

// restart empties the run; the next event must have position first.
func (t *tail) restart(first uint64) {
	clear(t.ring)
	t.start, t.n, t.first, t.bytes = 0, 0, first, 0
}

// read returns up to limit events after position after, when the run
// holds position after+1 (ok false: ask the database). complete says that
// the database holds nothing after them either: they reach the end of the
// run within tailTrust of the writer's last commit (then ok is true even
// with no events, for a reader at the end of the run). The events' data
// is shared, read-only (see eventstore.Store.ReadAll): the tail holds the
// writer's own copies, and nothing ever writes to them.
func (t *tail) read(after uint64, limit int) (events []eventstore.RecordedEvent, ok, complete bool) {
	if t == nil {
		return nil, false, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.n == 0 || after+1 < t.first {
		return nil, false, false
	}
	end := t.first + uint64(t.n) // the position after the run
	fresh := time.Since(t.confirmed) < t.trust
	if after+1 >= end {
		atEnd := after+1 == end && fresh // nothing newer, from memory
		return nil, atEnd, atEnd
	}
	from := int(after + 1 - t.first)
	count := min(t.n-from, limit)
	events = make([]eventstore.RecordedEvent, count)
	for i := range count {
		events[i] = t.ring[(t.start+from+i)%len(t.ring)]
	}
	return events, true, fresh && after+uint64(count)+1 == end
}
