package storetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

// memStore is an in-memory Store used only to validate the conformance
// suite: one mutex around a slice, positions assigned under the lock, so it
// is correct by construction. With sparse set, positions jump by 1 to 4, as
// on PostgreSQL. A non-empty bug plants one known defect, for the tests
// that check the suite catches it.
type memStore struct {
	sparse bool
	bug    string

	mu       sync.Mutex
	closed   bool
	log      []*eventstore.RecordedEvent // in position order
	streams  map[string][]*eventstore.RecordedEvent
	ids      map[uuid.UUID]*eventstore.RecordedEvent
	next     uint64 // last position handed out
	rng      *rand.Rand
	notifier *eventstore.Notifier
	done     chan struct{}
	locks    map[string]*sync.Mutex // per stream, for one planted defect
}

var _ eventstore.Store = (*memStore)(nil)

func newMemStore(sparse bool, bug string) *memStore {
	return &memStore{
		sparse:   sparse,
		bug:      bug,
		streams:  map[string][]*eventstore.RecordedEvent{},
		ids:      map[uuid.UUID]*eventstore.RecordedEvent{},
		rng:      rand.New(rand.NewPCG(7, 11)),
		notifier: eventstore.NewNotifier(),
		done:     make(chan struct{}),
	}
}

func (s *memStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	prepared, err := eventstore.Prepare(stream, events, 0)
	if s.bug == "no validation" {
		prepared, err = unvalidated(events), nil
	}
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	if err := ctx.Err(); err != nil && s.bug != "ignore context" {
		return eventstore.AppendResult{}, err
	}
	if strings.HasPrefix(s.bug, "positions before commit") {
		return s.appendOutOfOrder(stream, expected, prepared)
	}
	s.mu.Lock()
	res, wrote, err := s.apply(stream, expected, prepared)
	s.mu.Unlock()
	if wrote {
		s.notifier.Notify()
	}
	return res, err
}

// AppendMany checks every part before writing any (s.mu held
// throughout), unless the bug "many not atomic" writes the parts one by
// one, stopping at the first refused.
func (s *memStore) AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	prepared, err := eventstore.PrepareMany(parts, 0)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bug != "many not atomic" {
		for _, p := range prepared {
			if err := s.check(p.Stream, p.Expected, p.Events); err != nil {
				return nil, err
			}
		}
	}
	out := make([]eventstore.AppendResult, len(prepared))
	wrote := false
	for i, p := range prepared {
		res, w, err := s.apply(p.Stream, p.Expected, p.Events)
		wrote = wrote || w
		if err != nil {
			if wrote {
				s.notifier.Notify()
			}
			return nil, err
		}
		out[i] = res
	}
	if wrote {
		s.notifier.Notify()
	}
	return out, nil
}

// check is apply without writing: the error apply would return.
func (s *memStore) check(stream string, expected eventstore.ExpectedRevision, events []eventstore.PreparedEvent) error {
	if s.closed {
		return eventstore.ErrClosed
	}
	if len(events) > 0 && s.bug != "no idempotency" {
		if _, found, err := s.retried(stream, events); found || err != nil {
			return err
		}
	}
	current := int64(len(s.streams[stream])) - 1
	if !expected.Check(current) && s.bug != "ignore expected revision" {
		return &eventstore.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: current}
	}
	return nil
}

// apply checks and writes one append; s.mu is held.
func (s *memStore) apply(stream string, expected eventstore.ExpectedRevision, events []eventstore.PreparedEvent) (res eventstore.AppendResult, wrote bool, err error) {
	if s.closed {
		return res, false, eventstore.ErrClosed
	}
	if len(events) > 0 && s.bug != "no idempotency" {
		if res, found, err := s.retried(stream, events); found || err != nil {
			return res, false, err
		}
	}
	current := int64(len(s.streams[stream])) - 1
	if !expected.Check(current) && s.bug != "ignore expected revision" {
		return res, false, &eventstore.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: current}
	}
	if len(events) == 0 {
		return eventstore.AppendResult{Revision: current}, false, nil
	}
	now := time.Now().UTC()
	if s.bug == "local time" {
		now = time.Now()
	}
	for _, p := range events {
		md, err := eventstore.DecodeMetadata(p.MetadataJSON)
		if err != nil {
			return res, false, err
		}
		data := slices.Clone(p.Data)
		if s.bug == "keeps caller buffers" {
			data = p.Data
		}
		if s.bug == "compact data" {
			data = compact(data)
		}
		current++
		e := &eventstore.RecordedEvent{
			ID: p.ID, Stream: stream, Type: p.Type, Version: p.Version,
			Revision: current, Position: s.nextPosition(), RecordedAt: now,
			Data: data, Metadata: md,
		}
		s.log = append(s.log, e)
		s.streams[stream] = append(s.streams[stream], e)
		s.ids[e.ID] = e
		if res.Position == 0 || s.bug != "first position" {
			res.Position = e.Position
		}
	}
	res.Revision = current
	return res, true, nil
}

// retried recognises the retry of a stored append: every id stored, in
// this stream, at consecutive revisions in the same order. It returns the
// result of the original append's last event. Ids stored elsewhere or a
// partial match are refused.
func (s *memStore) retried(stream string, events []eventstore.PreparedEvent) (eventstore.AppendResult, bool, error) {
	var stored []*eventstore.RecordedEvent
	for _, p := range events {
		e, ok := s.ids[p.ID]
		if !ok {
			continue
		}
		if e.Stream != stream {
			return eventstore.AppendResult{}, false, &eventstore.DuplicateEventError{ID: p.ID, Stream: stream, Reason: fmt.Sprintf("stored in stream %q", e.Stream)}
		}
		stored = append(stored, e)
	}
	if len(stored) == 0 {
		return eventstore.AppendResult{}, false, nil
	}
	for i, p := range events {
		if len(stored) != len(events) || stored[i].ID != p.ID || stored[i].Revision != stored[0].Revision+int64(i) {
			return eventstore.AppendResult{}, false, &eventstore.DuplicateEventError{ID: p.ID, Stream: stream, Reason: "only partly matches the stored events"}
		}
	}
	last := stored[len(stored)-1]
	return eventstore.AppendResult{Revision: last.Revision, Position: last.Position}, true, nil
}

func (s *memStore) nextPosition() uint64 {
	step := uint64(1)
	if s.sparse {
		step += s.rng.Uint64N(4)
	}
	s.next += step
	return s.next
}

// appendOutOfOrder is the defect the suite exists for: positions are taken
// (like a bigserial) before the append commits, so a later position can
// become visible before an earlier one and a reader that moved past it
// never sees the earlier event.
//
// The variant "positions before commit, per stream in order" serialises the
// appends of each stream (as a per-stream lock taken before the position
// would), so each stream's revisions follow its positions and only readers
// of the whole log can notice.
func (s *memStore) appendOutOfOrder(stream string, expected eventstore.ExpectedRevision, events []eventstore.PreparedEvent) (eventstore.AppendResult, error) {
	if s.bug == "positions before commit, per stream in order" {
		l := s.streamLock(stream)
		l.Lock()
		defer l.Unlock()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return eventstore.AppendResult{}, eventstore.ErrClosed
	}
	reserved := make([]uint64, len(events))
	for i := range reserved {
		reserved[i] = s.nextPosition()
	}
	s.mu.Unlock()
	// The planted bug's window between reserving positions and committing,
	// widened so that the suite meets it (a delay, not synchronisation).
	runtime.Gosched()
	time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)

	s.mu.Lock()
	defer s.notifier.Notify()
	defer s.mu.Unlock()
	res, wrote, err := s.apply(stream, expected, events)
	if err != nil || !wrote {
		return res, err
	}
	// Give the events just written their reserved positions and move them
	// to their place in the log.
	written := s.log[len(s.log)-len(events):]
	for i, e := range written {
		e.Position = reserved[i]
	}
	s.next = max(s.next, reserved[len(reserved)-1])
	sort.SliceStable(s.log, func(i, j int) bool { return s.log[i].Position < s.log[j].Position })
	res.Position = reserved[len(reserved)-1]
	return res, nil
}

func (s *memStore) streamLock(stream string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks == nil {
		s.locks = map[string]*sync.Mutex{}
	}
	l, ok := s.locks[stream]
	if !ok {
		l = &sync.Mutex{}
		s.locks[stream] = l
	}
	return l
}

func (s *memStore) ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, eventstore.ErrClosed
	}
	evs := s.streams[stream]
	if len(evs) == 0 && s.bug != "missing stream is empty" {
		return nil, &eventstore.StreamNotFoundError{Stream: stream}
	}
	var out []eventstore.RecordedEvent
	take := func(e *eventstore.RecordedEvent) bool {
		out = append(out, copyEvent(e))
		return opts.Limit <= 0 || len(out) < opts.Limit
	}
	last := int64(len(evs)) - 1
	if opts.Direction == eventstore.Backward {
		from := opts.From
		if from < 0 || from > last || s.bug == "backward ignores from" {
			from = last
		}
		for r := from; r >= 0 && take(evs[r]); r-- {
		}
		return out, nil
	}
	for r := max(opts.From, 0); r <= last && take(evs[r]); r++ {
	}
	return out, nil
}

func (s *memStore) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.RecordedEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, eventstore.ErrClosed
	}
	if s.bug == "read all ignores limit" {
		limit = 0
	}
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].Position > after })
	var out []eventstore.RecordedEvent
	for ; i < len(s.log) && (limit <= 0 || len(out) < limit); i++ {
		out = append(out, copyEvent(s.log[i]))
	}
	return out, nil
}

func (s *memStore) Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, eventstore.ErrClosed
	}
	// A small batch, so catching up takes many reads.
	sub := eventstore.NewPollingSubscription(ctx, s, s.notifier, after, eventstore.PollOptions{BatchSize: 64, Done: s.done})
	if s.bug == "caught up twice" {
		return newRepeatCaughtUp(sub), nil
	}
	return sub, nil
}

func (s *memStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed && s.bug != "close not idempotent" {
		return nil
	}
	s.closed = true
	close(s.done)
	return nil
}

func copyEvent(e *eventstore.RecordedEvent) eventstore.RecordedEvent {
	c := *e
	c.Data = slices.Clone(e.Data)
	return c
}

func unvalidated(events []eventstore.EventData) []eventstore.PreparedEvent {
	out := make([]eventstore.PreparedEvent, len(events))
	for i, e := range events {
		md, _ := json.Marshal(e.Metadata)
		out[i] = eventstore.PreparedEvent{ID: e.ID, Type: e.Type, Version: max(e.Version, 1), Data: e.Data, MetadataJSON: md}
	}
	return out
}

func compact(data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

// repeatCaughtUp wraps a subscription and sends a second CaughtUp after
// the first live event: the defect "CaughtUp more than once".
type repeatCaughtUp struct {
	eventstore.Subscription
	out chan eventstore.Message
}

func newRepeatCaughtUp(sub eventstore.Subscription) *repeatCaughtUp {
	r := &repeatCaughtUp{Subscription: sub, out: make(chan eventstore.Message)}
	go func() {
		defer close(r.out)
		seen, repeated := false, false
		for m := range sub.Messages() {
			r.out <- m
			if m.CaughtUp {
				seen = true
			} else if seen && !repeated {
				repeated = true
				r.out <- eventstore.Message{CaughtUp: true}
			}
		}
	}()
	return r
}

func (r *repeatCaughtUp) Messages() <-chan eventstore.Message { return r.out }
