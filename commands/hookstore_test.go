package commands_test

import (
	"context"
	"sync"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// hookStore wraps the real store and lets a test step in around appends
// and reads of chosen streams: to fail an append the way a broken disk
// would, to make another writer win a race, or to lose a read-back.
type hookStore struct {
	commands.EventStore

	mu sync.Mutex
	// beforeAppend runs before the real append; a non-nil error fails the
	// append without writing.
	beforeAppend func(stream string) error
	// onAppend sees the events of every append before it is made.
	onAppend func(stream string, events []eventstore.EventData)
	// afterAppend runs after the real append and may replace its error
	// (an append that landed but whose answer was lost).
	afterAppend func(stream string, err error) error
	// beforeRead fails a read when it returns an error.
	beforeRead func(stream string) error
	appends    map[string]int
}

func (h *hookStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	h.mu.Lock()
	if h.appends == nil {
		h.appends = map[string]int{}
	}
	h.appends[stream]++
	before, after, on := h.beforeAppend, h.afterAppend, h.onAppend
	h.mu.Unlock()
	if on != nil {
		on(stream, events)
	}
	if before != nil {
		if err := before(stream); err != nil {
			return eventstore.AppendResult{}, err
		}
	}
	res, err := h.EventStore.Append(ctx, stream, expected, events...)
	if after != nil {
		err = after(stream, err)
	}
	return res, err
}

// AppendMany runs the hooks of every part: a beforeAppend error fails
// the whole call without writing; afterAppend sees each part's outcome
// and the first error it returns replaces the call's.
func (h *hookStore) AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	h.mu.Lock()
	if h.appends == nil {
		h.appends = map[string]int{}
	}
	for _, p := range parts {
		h.appends[p.Stream]++
	}
	before, after, on := h.beforeAppend, h.afterAppend, h.onAppend
	h.mu.Unlock()
	for _, p := range parts {
		if on != nil {
			on(p.Stream, p.Events)
		}
		if before != nil {
			if err := before(p.Stream); err != nil {
				return nil, err
			}
		}
	}
	res, err := h.EventStore.AppendMany(ctx, parts...)
	if after != nil {
		var replaced error
		for _, p := range parts {
			if e := after(p.Stream, err); e != err && replaced == nil {
				replaced = e
			}
		}
		if replaced != nil {
			err = replaced
		}
	}
	return res, err
}

func (h *hookStore) ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error) {
	h.mu.Lock()
	before := h.beforeRead
	h.mu.Unlock()
	if before != nil {
		if err := before(stream); err != nil {
			return nil, err
		}
	}
	return h.EventStore.ReadStream(ctx, stream, opts)
}

func (h *hookStore) set(fn func(h *hookStore)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h)
}

func (h *hookStore) appendsTo(stream string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.appends[stream]
}

func isSession(stream string) bool {
	s, err := domain.ParseStream(stream)
	return err == nil && s.Kind == domain.StreamSession
}
